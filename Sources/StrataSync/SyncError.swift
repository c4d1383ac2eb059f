import StrataSyncWire

/// A failure of a sync: what failed, where (the request, the entity and object), and whether
/// trying again later can help (``isTransient``).
///
/// ```swift
/// do {
///     try await engine.sync()
/// } catch let error as SyncError where error.code == .rejected {
///     print(error.protocolError?.error.rawValue ?? "", error.message)
/// }
/// ```
public struct SyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case network, server, rateLimited, rejected, invalidResponse, invalidData, store
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The server could not be reached, or the connection failed (transient).
        public static let network = Code(.network)
        /// The server failed (HTTP 5xx; transient).
        public static let server = Code(.server)
        /// The server asked for fewer requests (HTTP 429; transient).
        public static let rateLimited = Code(.rateLimited)
        /// The server refused the request (HTTP 4xx): ``SyncError/protocolError`` says why.
        /// Retrying the same request cannot help.
        public static let rejected = Code(.rejected)
        /// The server's answer is not the protocol's JSON.
        public static let invalidResponse = Code(.invalidResponse)
        /// A pulled change that cannot be stored: a value of the wrong type, an unknown entity.
        public static let invalidData = Code(.invalidData)
        /// The store failed to read or write (``SyncError/underlying`` is its error).
        public static let store = Code(.store)

        /// The code's name.
        public var description: String { base.rawValue }
    }

    /// What kind of failure.
    public let code: Code
    /// What failed and where, for a person.
    public let message: String
    /// The request, as `POST /v1/push`, when a request failed.
    public let request: String?
    /// The HTTP status, when the server answered.
    public let status: Int?
    /// The protocol's error the server answered with (``Code/rejected``), if any.
    public let protocolError: SyncProtocolError?
    /// The error underneath (a store's `StrataError`, a URL error), described.
    public let underlying: String?

    /// An error.
    public init(_ code: Code, _ message: String, request: String? = nil, status: Int? = nil,
                protocolError: SyncProtocolError? = nil, underlying: String? = nil) {
        self.code = code
        self.message = message
        self.request = request
        self.status = status
        self.protocolError = protocolError
        self.underlying = underlying
    }

    /// Whether trying again later may succeed: the network, a server failure, too many requests.
    /// The engine retries these with backoff and never drops a change because of them.
    public var isTransient: Bool { code == .network || code == .server || code == .rateLimited }

    /// `code: message (request, status)`.
    public var description: String {
        var text = "\(code): \(message)"
        var context: [String] = []
        if let request { context.append(request) }
        if let status { context.append("HTTP \(status)") }
        if let underlying { context.append(underlying) }
        if !context.isEmpty { text += " (" + context.joined(separator: ", ") + ")" }
        return text
    }

    /// `error` as a sync error: itself, or a store's error wrapped as ``Code/store``.
    static func wrapping(_ error: any Error, doing what: String) -> SyncError {
        if let error = error as? SyncError { return error }
        return SyncError(.store, "\(what) failed", underlying: "\(error)")
    }
}
