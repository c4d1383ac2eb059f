import Foundation
@testable import StrataSync
import StrataSyncWire
import Strata

/// A ``SyncTransport`` to an ``InMemorySyncServer``, as one device reaches it: protocol errors
/// become ``SyncError``s as ``HTTPSyncTransport`` makes them (by their HTTP status), and a test
/// can make the next requests fail (`failNext`) or lose a push's answer after the server
/// applied it (`loseNextPushAnswer`).
final class InMemoryTransport: SyncTransport, @unchecked Sendable {
    // Safe: the mutable fields are read and written only while `lock` is held.
    private let lock = NSLock()
    private var failures: [SyncError] = []
    private var losesPushAnswer = false
    private var requestLog: [String] = []
    private var failureAfter: (index: Int, error: SyncError)?
    let server: InMemorySyncServer

    init(_ server: InMemorySyncServer) { self.server = server }

    /// The next requests fail with these errors, one each, before reaching the server.
    func failNext(_ errors: SyncError...) { lock.withLock { failures += errors } }

    /// The request after the next `requests` ones fails with `error`.
    func failAfter(requests: Int, _ error: SyncError) {
        lock.withLock { failureAfter = (requestLog.count + requests, error) }
    }

    /// The next push is applied by the server, but its answer is lost (a network error).
    func loseNextPushAnswer() { lock.withLock { losesPushAnswer = true } }

    private func injected() throws {
        let failure = lock.withLock { () -> SyncError? in
            if let after = failureAfter, requestLog.count - 1 == after.index {
                failureAfter = nil
                return after.error
            }
            return failures.isEmpty ? nil : failures.removeFirst()
        }
        if let failure { throw failure }
    }

    /// Every request made, as `GET /v1/records after=…`, in order (failed ones included).
    var requests: [String] { lock.withLock { requestLog } }

    private func mapped<T>(_ request: String, _ body: () async throws -> T) async throws -> T {
        lock.withLock { requestLog.append(request) }
        try injected()
        do {
            return try await body()
        } catch let error as SyncProtocolError {
            let data = (try? JSONEncoder().encode(error)) ?? Data()
            throw HTTPSyncTransport.error(status: error.error.httpStatus, data: data, request: request)
        }
    }

    func sendSchema(_ schema: SyncSchema) async throws -> SyncSchema {
        try await mapped("PUT /v1/schema") { try await server.sendSchema(schema) }
    }

    func push(_ request: PushRequest) async throws -> PushResponse {
        let response = try await mapped("POST /v1/push") { try await server.push(request) }
        if lock.withLock({ defer { losesPushAnswer = false }; return losesPushAnswer }) {
            throw SyncError(.network, "the connection was lost", request: "POST /v1/push")
        }
        return response
    }

    func pull(after cursor: String, limit: Int, wait: Int) async throws -> PullResponse {
        try await mapped("GET /v1/pull") { try await server.pull(after: cursor, limit: limit, wait: wait) }
    }

    func records(after position: String?, limit: Int) async throws -> RecordsResponse {
        try await mapped("GET /v1/records after=\(position ?? "")") { await server.records(after: position, limit: limit) }
    }
}
