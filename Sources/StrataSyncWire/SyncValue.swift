import Foundation

/// An attribute value as the sync protocol carries it. JSON cannot tell an integer from a real
/// that has no fraction, nor text from base64 bytes: a decoded value is what JSON said, and
/// ``resolved(as:optional:)`` turns it into the attribute's type by the space's schema.
public enum SyncValue: Sendable, Hashable, Codable {
    /// JSON `null`.
    case null
    /// A JSON integer.
    case integer(Int64)
    /// A JSON number with a fraction or exponent (or an integer resolved as a real).
    case real(Double)
    /// A JSON string.
    case text(String)
    /// Bytes, sent as a base64 JSON string.
    case blob(Data)

    /// Decodes null, an integer, a number or a string (a blob arrives as a string).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let real = try? container.decode(Double.self) {
            self = .real(real)
        } else if let text = try? container.decode(String.self) {
            self = .text(text)
        } else {
            throw DecodingError.typeMismatch(SyncValue.self, DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "a value is null, a number or a string"))
        }
    }

    /// Encodes null, a number, a string, or base64 text for bytes.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .integer(let value): try container.encode(value)
        case .real(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        case .blob(let value): try container.encode(value.base64EncodedString())
        }
    }

    /// The value as an attribute of `type` holds it, or nil when JSON gave a kind the type
    /// cannot hold (a string for an integer, a fraction for an integer, text that is not base64
    /// for a blob, null for a non-optional attribute).
    public func resolved(as type: SyncAttributeType, optional: Bool) -> SyncValue? {
        switch (self, type) {
        case (.null, _): return optional ? .null : nil
        case (.integer, .integer), (.real, .real), (.text, .text), (.blob, .blob): return self
        case (.integer(let value), .real): return .real(Double(value))
        case (.text(let value), .blob): return Data(base64Encoded: value).map(SyncValue.blob)
        default: return nil
        }
    }

    /// The JSON kind, for error messages ("a string", "null").
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .integer: "an integer"
        case .real: "a number"
        case .text: "a string"
        case .blob: "bytes"
        }
    }
}
