import Foundation
import Strata

/// Shows stored values by their attribute's type: dates as ISO 8601, booleans as true/false.
enum ValueFormatter {
    /// The value as a table cell; long text is cut to `width` characters with an ellipsis.
    static func text(_ value: DatabaseValue, _ type: AttributeType, width: Int? = nil) -> String {
        let text: String
        switch (type, value) {
        case (_, .null): text = "NULL"
        case (.bool, .integer(let int)): text = int == 0 ? "false" : "true"
        case (.date, .real(let seconds)): text = iso8601(seconds)
        case (.date, .integer(let seconds)): text = iso8601(Double(seconds))
        case (_, .integer(let int)): text = String(int)
        case (_, .real(let real)): text = "\(real)"
        case (_, .text(let string)): text = string
        case (_, .blob(let data)): text = "<\(data.count) bytes>"
        }
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        guard let width, flat.count > width else { return flat }
        return String(flat.prefix(max(1, width - 1))) + "…"
    }

    /// The value as JSON: numbers, booleans, strings (dates as ISO 8601, data as base64), null.
    static func json(_ value: DatabaseValue, _ type: AttributeType) -> JSONValue {
        switch (type, value) {
        case (_, .null): return .null
        case (.bool, .integer(let int)): return .bool(int != 0)
        case (.date, .real(let seconds)): return .string(iso8601(seconds))
        case (.date, .integer(let seconds)): return .string(iso8601(Double(seconds)))
        case (_, .integer(let int)): return .integer(int)
        case (_, .real(let real)): return .number(real)
        case (_, .text(let string)): return .string(string)
        case (_, .blob(let data)): return .string(data.base64EncodedString())
        }
    }

    /// A stored date (seconds since 2001-01-01 UTC) in ISO 8601, with milliseconds when it has a fraction.
    static func iso8601(_ secondsSinceReference: Double) -> String {
        let date = Date(timeIntervalSinceReferenceDate: secondsSinceReference)
        let whole = secondsSinceReference == secondsSinceReference.rounded(.down)
        return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: !whole))
    }
}
