/// A primary key as the sync protocol carries it: a JSON integer or a JSON string, as the
/// entity's key type says.
public enum SyncKey: Sendable, Hashable, Codable, CustomStringConvertible {
    /// An integer key.
    case integer(Int64)
    /// A text key.
    case text(String)

    /// Decodes a JSON integer or string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let text = try? container.decode(String.self) {
            self = .text(text)
        } else {
            throw DecodingError.typeMismatch(SyncKey.self, DecodingError.Context(
                codingPath: decoder.codingPath, debugDescription: "a key is a JSON integer or string"))
        }
    }

    /// Encodes a JSON integer or string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        }
    }

    /// The key as text: the integer's decimal digits, or the text itself.
    public var description: String {
        switch self {
        case .integer(let value): String(value)
        case .text(let value): value
        }
    }
}
