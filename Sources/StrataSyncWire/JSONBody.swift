import Foundation

/// Decodes the protocol's JSON bodies, turning every decoding failure into a `malformed`
/// ``SyncProtocolError`` that says where: the path in the JSON (`changes[3].values.title`) or
/// the parser's own words when the text is not JSON. The one place both the sync service and
/// ``PushRequest/decode(_:limits:)`` read a body.
public enum JSONBody {
    /// Decodes `type` from `body`.
    /// - Throws: ``SyncProtocolError`` (`malformed`) naming where and what.
    public static func decode<Value: Decodable>(_ type: Value.Type, from body: Data) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch let error as DecodingError {
            throw SyncProtocolError(.malformed, describe(error))
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        switch error {
        case .typeMismatch(let type, let context):
            "\(path(context.codingPath)): expected \(name(type)) (\(context.debugDescription))"
        case .valueNotFound(let type, let context):
            "\(path(context.codingPath)): expected \(name(type)), found null"
        case .keyNotFound(let key, let context):
            "\(path(context.codingPath + [key])): missing"
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                "the body is not JSON: \(context.underlyingError.map { "\($0)" } ?? context.debugDescription)"
            } else {
                "\(path(context.codingPath)): \(context.debugDescription)"
            }
        @unknown default:
            "\(error)"
        }
    }

    /// `changes[3].values.title`, or `the body` for the top level.
    private static func path(_ codingPath: [any CodingKey]) -> String {
        guard !codingPath.isEmpty else { return "the body" }
        var text = ""
        for key in codingPath {
            if let index = key.intValue, key.stringValue.hasPrefix("Index") || key.stringValue == String(index) {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    private static func name(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int64.Type, is Int.Type: "an integer"
        default: "\(type)"
        }
    }
}
