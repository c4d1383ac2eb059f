import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StrataSyncWire

/// A bare HTTP client of the protocol for the tests: sends a request, returns the status and
/// body (the library's client is tested in its own package; here the server is under test).
struct SyncClient: Sendable {
    let port: Int
    let token: String?

    struct Answer: Sendable {
        let status: Int
        let body: Data

        func decode<Value: Decodable>(_ type: Value.Type) throws -> Value {
            try JSONDecoder().decode(type, from: body)
        }

        /// The protocol error the body holds, if it is one.
        var error: SyncProtocolError? { try? decode(SyncProtocolError.self) }
    }

    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 120
        return URLSession(configuration: configuration)
    }()

    func send(_ method: String, _ path: String, body: Data? = nil) async throws -> Answer {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await Self.session.data(for: request)
        return Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data)
    }

    func send(_ method: String, _ path: String, json: some Encodable) async throws -> Answer {
        try await send(method, path, body: try JSONEncoder().encode(json))
    }

    // The protocol's calls, expecting success.

    @discardableResult
    func putSchema(_ schema: SyncSchema) async throws -> SyncSchema {
        try await expectOK(send("PUT", "/v1/schema", json: schema)).decode(SyncSchema.self)
    }

    func push(device: String, batch: Int64, _ changes: [SyncEntry]) async throws -> PushResponse {
        try await expectOK(send("POST", "/v1/push", json: PushRequest(device: device, batch: batch, changes: changes)))
            .decode(PushResponse.self)
    }

    func pull(after cursor: String, limit: Int = 500, wait: Int = 0) async throws -> PullResponse {
        try await expectOK(send("GET", "/v1/pull?after=\(cursor)&limit=\(limit)&wait=\(wait)")).decode(PullResponse.self)
    }

    /// Every entry after `cursor`, page by page.
    func pullAll(after cursor: String = "0") async throws -> (entries: [SyncEntry], cursor: String) {
        var entries: [SyncEntry] = []
        var cursor = cursor
        while true {
            let page = try await pull(after: cursor)
            entries += page.changes
            cursor = page.cursor
            if !page.more { return (entries, cursor) }
        }
    }

    private func expectOK(_ answer: Answer) throws -> Answer {
        guard answer.status == 200 else {
            throw ClusterError("HTTP \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        }
        return answer
    }
}
