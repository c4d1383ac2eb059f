import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StrataSyncWire

/// The sync protocol over HTTP, to a Strata sync service (`strata-server serve`), with
/// `URLSession` (FoundationNetworking on Linux).
///
/// ```swift
/// let transport = HTTPSyncTransport(server: URL(string: "https://sync.example.com")!, token: token)
/// let engine = SyncEngine(store: store, transport: transport, entities: [Article.self])
/// ```
///
/// Every request carries `Authorization: Bearer <token>`. An answer that is not 2xx becomes a
/// ``SyncError``: a network failure `.network`, 5xx `.server`, 429 `.rateLimited` (all three
/// transient: the engine retries them), any other 4xx `.rejected` with the server's
/// `SyncProtocolError` (its code, message, and `expected` or `floor`), never retried as is.
public struct HTTPSyncTransport: SyncTransport {
    /// The service's root URL; requests go to `/v1/…` under it.
    public let server: URL
    private let token: String
    private let session: URLSession

    /// A transport to `server` authenticating with `token`.
    /// - Parameters:
    ///   - server: The service's root, for example `http://127.0.0.1:8080`.
    ///   - token: The bearer token the service issued for the user (`strata-server add-user`).
    ///   - session: The session requests go through.
    public init(server: URL, token: String, session: URLSession = .shared) {
        self.server = server
        self.token = token
        self.session = session
    }

    /// `PUT /v1/schema`.
    public func sendSchema(_ schema: SyncSchema) async throws -> SyncSchema {
        try await send("PUT", "/v1/schema", body: schema)
    }

    /// `POST /v1/push`.
    public func push(_ request: PushRequest) async throws -> PushResponse {
        try await send("POST", "/v1/push", body: request)
    }

    /// `GET /v1/pull?after=…&limit=…&wait=…`; the request's timeout is `wait` plus 30 seconds.
    public func pull(after cursor: String, limit: Int, wait: Int) async throws -> PullResponse {
        try await send("GET", "/v1/pull", query: [("after", cursor), ("limit", String(limit)), ("wait", String(wait))],
                       timeout: TimeInterval(wait) + 30)
    }

    /// `GET /v1/records?after=…&limit=…`.
    public func records(after position: String?, limit: Int) async throws -> RecordsResponse {
        try await send("GET", "/v1/records", query: (position.map { [("after", $0)] } ?? []) + [("limit", String(limit))])
    }

    private struct NoBody: Encodable {}

    private func send<Answer: Decodable>(_ method: String, _ path: String, query: [(String, String)] = [],
                                         timeout: TimeInterval = 60) async throws -> Answer {
        try await send(method, path, body: NoBody?.none, query: query, timeout: timeout)
    }

    private func send<Body: Encodable, Answer: Decodable>(_ method: String, _ path: String, body: Body?,
                                                          query: [(String, String)] = [],
                                                          timeout: TimeInterval = 60) async throws -> Answer {
        let name = "\(method) \(path)"
        var components = URLComponents(url: server.appendingPathComponent(String(path.dropFirst())), resolvingAgainstBaseURL: false)
        if !query.isEmpty { components?.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        guard let url = components?.url else {
            throw SyncError(.rejected, "cannot make a URL of \(server) and \(path)", request: name)
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = try JSONEncoder().encode(body)
        }
        let (data, response) = try await exchange(request, name: name)
        guard let status = (response as? HTTPURLResponse)?.statusCode else {
            throw SyncError(.invalidResponse, "the answer is not HTTP", request: name)
        }
        guard (200..<300).contains(status) else { throw Self.error(status: status, data: data, request: name) }
        do {
            return try JSONBody.decode(Answer.self, from: data)
        } catch {
            // What and where: the JSON path, or the parser's words.
            throw SyncError(.invalidResponse, "the answer is not the protocol's \(Answer.self): \(error)", request: name,
                            status: status)
        }
    }

    /// The request's answer; a failure to get one is a transient `.network` error. Cancelling
    /// the calling task cancels the request (a long poll ends at once when the engine stops).
    private func exchange(_ request: URLRequest, name: String) async throws -> (Data, URLResponse) {
        let running = RunningRequest()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let task = session.dataTask(with: request) { data, response, error in
                        if let error {
                            continuation.resume(throwing: error)
                        } else if let response {
                            continuation.resume(returning: (data ?? Data(), response))
                        } else {
                            continuation.resume(throwing: URLError(.badServerResponse))
                        }
                    }
                    running.start(task)
                }
            } onCancel: {
                running.cancel()
            }
        } catch {
            throw SyncError(.network, "the server did not answer", request: name, underlying: "\(error)")
        }
    }

    /// The error for a non-2xx answer: its protocol error when the body is one.
    static func error(status: Int, data: Data, request: String) -> SyncError {
        let refusal = try? JSONDecoder().decode(SyncProtocolError.self, from: data)
        let message = refusal?.description ?? String(decoding: data.prefix(500), as: UTF8.self)
        switch status {
        case 429: return SyncError(.rateLimited, "too many requests: \(message)", request: request, status: status,
                                   protocolError: refusal)
        case 500...: return SyncError(.server, "the server failed: \(message)", request: request, status: status,
                                      protocolError: refusal)
        default: return SyncError(.rejected, "the server refused the request: \(message)", request: request,
                                  status: status, protocolError: refusal)
        }
    }
}

/// The data task of one request, cancelled when its caller's task is — even when the
/// cancellation comes before the task started.
private final class RunningRequest: @unchecked Sendable {
    // Safe: `task` and `isCancelled` are read and written only while `lock` is held, and a
    // URLSessionTask may be resumed and cancelled from any thread.
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var isCancelled = false

    func start(_ task: URLSessionDataTask) {
        let cancelled = lock.withLock {
            self.task = task
            return isCancelled
        }
        task.resume()
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = lock.withLock {
            isCancelled = true
            return self.task
        }
        task?.cancel()
    }
}
