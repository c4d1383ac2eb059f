import Foundation
import Hummingbird
import Logging
import NIOCore
import StrataSyncWire

/// The protocol's endpoints (`/v1/schema`, `/v1/push`, `/v1/pull`, `/v1/records`): each
/// authenticates the bearer token, does its work in PostgreSQL through ``SpaceStore``, and
/// answers JSON — a refused request answers the protocol's error body with its status.
struct SyncService: Sendable {
    let store: SpaceStore
    let users: UserDirectory
    let notifier: ChangeNotifier
    let limits: SyncLimits

    /// The most entries one pull or records page returns.
    static let maxPageLimit = 5_000
    /// The longest a pull waits for a change, in seconds.
    static let maxWaitSeconds = 60

    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/v1/schema") { request, _ in
            await respond { try await store.schema(user: try await authenticate(request)) }
        }
        router.put("/v1/schema") { request, _ in
            await respond {
                let user = try await authenticate(request)
                let schema = try JSONBody.decode(SyncSchema.self, from: try await body(of: request))
                return try await store.putSchema(schema, user: user)
            }
        }
        router.post("/v1/push") { request, _ in
            await respond {
                let user = try await authenticate(request)
                let push = try PushRequest.decode(try await body(of: request), limits: limits)
                return try await store.push(push, user: user)
            }
        }
        router.get("/v1/pull") { request, _ in
            await respond { try await pull(request) }
        }
        router.get("/v1/records") { request, _ in
            await respond {
                let user = try await authenticate(request)
                let query = request.uri.queryParameters
                let position = try query.get("after").flatMap { text -> RecordPosition? in
                    guard !text.isEmpty else { return nil }
                    guard let position = RecordPosition(text) else {
                        throw SyncProtocolError(.malformed, "after=\(text) is not a position a records page returned")
                    }
                    return position
                }
                let limit = try integer(query.get("limit"), named: "limit", default: 500, in: 1...Int64.max)
                return try await store.recordsPage(user: user, after: position, limit: min(Int(limit), Self.maxPageLimit))
            }
        }
        return router
    }

    /// A pull; with `wait`, a long poll: when nothing follows the cursor it waits for a push to
    /// the space (``ChangeNotifier``) or the time, reading the log again after each wake-up.
    private func pull(_ request: Request) async throws -> PullResponse {
        let user = try await authenticate(request)
        let query = request.uri.queryParameters
        let cursor = try integer(query.get("after"), named: "after", default: 0, in: 0...Int64.max)
        let limit = try integer(query.get("limit"), named: "limit", default: 500, in: 1...Int64.max)
        let wait = try integer(query.get("wait"), named: "wait", default: 0, in: 0...Int64.max)
        let pageLimit = min(Int(limit), Self.maxPageLimit)
        let deadline = ContinuousClock.now + .seconds(min(Int(wait), Self.maxWaitSeconds))
        while true {
            let seen = await notifier.generation(of: user)
            let page = try await store.pullPage(user: user, after: cursor, limit: pageLimit)
            let left = deadline - ContinuousClock.now
            guard page.changes.isEmpty, left > .zero else { return page }
            await notifier.wait(for: user, past: seen, timeout: left)
        }
    }

    private func authenticate(_ request: Request) async throws -> Int64 {
        guard let header = request.headers[.authorization] else {
            throw SyncProtocolError(.unauthorized, "the request has no Authorization header")
        }
        guard header.lowercased().hasPrefix("bearer ") else {
            throw SyncProtocolError(.unauthorized, "the Authorization header is not `Bearer <token>`")
        }
        return try await users.authenticate(token: String(header.dropFirst("bearer ".count)))
    }

    private func body(of request: Request) async throws -> Data {
        do {
            return Data(buffer: try await request.body.collect(upTo: limits.maxRequestBytes))
        } catch is NIOTooManyBytesError {
            throw SyncProtocolError(.tooLarge, "the body is over \(limits.maxRequestBytes) bytes")
        }
    }

    private func integer(_ text: String?, named name: String, default value: Int64,
                         in range: ClosedRange<Int64>) throws -> Int64 {
        guard let text else { return value }
        guard let number = Int64(text), range.contains(number) else {
            throw SyncProtocolError(.malformed, "\(name)=\(text) is not a whole number of at least \(range.lowerBound)")
        }
        return number
    }

    /// Runs a handler and answers its result as JSON, or its error as the protocol's error body.
    private func respond<Value: Encodable>(_ body: () async throws -> Value) async -> Response {
        do {
            return Self.json(try await body(), status: .ok)
        } catch let error as SyncProtocolError {
            return Self.json(error, status: HTTPResponse.Status(code: error.error.httpStatus))
        } catch {
            store.logger.error("request failed", metadata: ["error": "\(String(reflecting: error))"])
            return Self.json(SyncProtocolError(.internalError, "the server failed: \(error)"), status: .internalServerError)
        }
    }

    private static func json(_ value: some Encodable, status: HTTPResponse.Status) -> Response {
        let data = (try? JSONEncoder().encode(value)) ?? Data(#"{"error":"internalError","message":"encoding"}"#.utf8)
        return Response(status: status, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
