/// An error of the sync protocol: the JSON body `{"error": code, "message": …}` of every
/// refused request, and what a device reports when it receives one.
public struct SyncProtocolError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        /// No token, or one the server does not know (401).
        case unauthorized
        /// The token is known but may not do this: a device ID of another user's (403).
        case forbidden
        /// The body is not the protocol's JSON (400).
        case malformed
        /// The body, the batch or one entry is beyond the server's limits (413).
        case tooLarge
        /// An entity the space's schema does not have (422).
        case unknownEntity
        /// An attribute the entity does not have (422).
        case unknownAttribute
        /// A value or key of the wrong kind for its type (422).
        case typeMismatch
        /// A schema that differs from the space's (409).
        case schemaMismatch
        /// A batch number past the next one expected (409; ``SyncProtocolError/expected``).
        case batchGap
        /// A cursor below what the server still keeps (410; ``SyncProtocolError/floor``).
        case cursorExpired
        /// A path or method the server does not have (404).
        case notFound
        /// The server failed (500).
        case internalError

        /// The HTTP status the server answers with.
        public var httpStatus: Int {
            switch self {
            case .unauthorized: 401
            case .forbidden: 403
            case .malformed: 400
            case .tooLarge: 413
            case .unknownEntity, .unknownAttribute, .typeMismatch: 422
            case .schemaMismatch, .batchGap: 409
            case .cursorExpired: 410
            case .notFound: 404
            case .internalError: 500
            }
        }
    }

    /// What went wrong.
    public var error: Code
    /// What and where, for a person.
    public var message: String
    /// For ``Code/batchGap``: the batch number the server expects next.
    public var expected: Int64?
    /// For ``Code/cursorExpired``: the oldest cursor the server still serves.
    public var floor: String?

    /// An error.
    public init(_ error: Code, _ message: String, expected: Int64? = nil, floor: String? = nil) {
        self.error = error
        self.message = message
        self.expected = expected
        self.floor = floor
    }

    /// `code: message`.
    public var description: String { "\(error.rawValue): \(message)" }
}
