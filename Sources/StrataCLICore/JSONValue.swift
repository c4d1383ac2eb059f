import Foundation

/// A JSON value that keeps its objects' keys in the order they were given, rendered
/// deterministically (two-space indentation, keys in order) for `--json` output.
indirect enum JSONValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
                         ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .integer(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    static func int<I: BinaryInteger>(_ value: I) -> JSONValue { .integer(Int64(value)) }
    static func optional(_ value: JSONValue?) -> JSONValue { value ?? .null }

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.rendered(pretty: false) == rhs.rendered(pretty: false) }

    /// The JSON text; pretty-printed with two-space indentation unless `pretty` is false.
    func rendered(pretty: Bool = true) -> String {
        var text = ""
        render(into: &text, indent: pretty ? 0 : nil)
        return text
    }

    private func render(into text: inout String, indent: Int?) {
        let newline = indent.map { "\n" + String(repeating: "  ", count: $0 + 1) } ?? ""
        let closing = indent.map { "\n" + String(repeating: "  ", count: $0) } ?? ""
        switch self {
        case .null: text += "null"
        case .bool(let value): text += value ? "true" : "false"
        case .integer(let value): text += String(value)
        case .number(let value):
            if value.isFinite {
                text += value == value.rounded() && abs(value) < 1e15 ? String(format: "%.1f", value) : "\(value)"
            } else {
                text += "null"
            }
        case .string(let value): text += Self.quoted(value)
        case .array(let values):
            if values.isEmpty { text += "[]"; return }
            text += "["
            for (index, value) in values.enumerated() {
                if index > 0 { text += "," }
                text += newline
                value.render(into: &text, indent: indent.map { $0 + 1 })
            }
            text += closing + "]"
        case .object(let members):
            if members.isEmpty { text += "{}"; return }
            text += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { text += "," }
                text += newline + Self.quoted(key) + (indent == nil ? ":" : ": ")
                value.render(into: &text, indent: indent.map { $0 + 1 })
            }
            text += closing + "}"
        }
    }

    private static func quoted(_ string: String) -> String {
        var result = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
