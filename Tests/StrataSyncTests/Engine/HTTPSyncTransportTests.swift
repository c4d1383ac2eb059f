import Foundation
@testable import StrataSync
import StrataSyncWire
import Testing

/// How the HTTP transport turns answers into errors: what and where, and whether to retry.
@Suite struct HTTPSyncTransportTests {
    @Test func refusalsCarryTheProtocolsErrorAndAreNotTransient() throws {
        let body = try JSONEncoder().encode(SyncProtocolError(.batchGap, "batch 9 after 7", expected: 8))
        let error = HTTPSyncTransport.error(status: 409, data: body, request: "POST /v1/push")
        #expect(error.code == .rejected && !error.isTransient)
        #expect(error.protocolError?.error == .batchGap && error.protocolError?.expected == 8)
        #expect("\(error)".contains("batch 9 after 7") && "\(error)".contains("POST /v1/push") && "\(error)".contains("HTTP 409"))

        let unauthorized = HTTPSyncTransport.error(status: 401, data: Data("no token".utf8), request: "GET /v1/pull")
        #expect(unauthorized.code == .rejected && unauthorized.protocolError == nil && unauthorized.message.contains("no token"))
    }

    @Test func serverFailuresAndRateLimitsAreTransient() {
        let failed = HTTPSyncTransport.error(status: 503, data: Data(), request: "POST /v1/push")
        #expect(failed.code == .server && failed.isTransient)
        let limited = HTTPSyncTransport.error(status: 429, data: Data(), request: "POST /v1/push")
        #expect(limited.code == .rateLimited && limited.isTransient)
    }

    @Test func anUnreachableServerIsATransientNetworkError() async throws {
        // Port 9 (discard) on the loopback: nothing listens there, the connection is refused.
        let transport = HTTPSyncTransport(server: URL(string: "http://127.0.0.1:9")!, token: "t")
        await #expect { _ = try await transport.pull(after: "0", limit: 10, wait: 0) } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.code == .network && error.isTransient && error.request == "GET /v1/pull"
        }
    }
}
