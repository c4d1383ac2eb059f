import Foundation
@_spi(Sync) import Strata
import StrataSync
import StrataSyncWire
import StrataTestSupport
import Testing

/// Automatic mode: a push after local saves, the long poll for the server's news, retries.
@Suite struct AutomaticSyncTests {
    @Test func aSaveReachesTheOtherDeviceWithoutASyncCall() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let a = try await TestDevice.open(directory, "a", server: server)
        let b = try await TestDevice.open(directory, "b", server: server) { $0.pullWait = 5 }
        let pulled = await b.engine.events()
        await a.engine.start()
        await b.engine.start()
        #expect(await a.engine.isStarted)

        // A transient failure on A's first push is retried with backoff.
        a.transport.failNext(SyncError(.network, "no route"))
        try await a.save { $0.insert(Article.make(1)) }
        var reached = false
        for await event in pulled {
            if case .pulled = event, try await b.store.fetch(Article.self, id: 1) != nil {
                reached = true
                break
            }
        }
        #expect(reached)
        #expect(try await b.store.fetch(Article.self, id: 1) == Article.make(1))
        try await a.close()
        try await b.close()
        #expect(await MainActor.run { b.engine.status.phase == .stopped })
    }

    @Test func aRefusalIsReportedAndNotRetried() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let a = try await TestDevice.open(directory, "a", server: server)
        let events = await a.engine.events()
        a.transport.failNext(SyncError(.rejected, "forbidden", status: 403))
        await a.engine.start()
        var failure: (error: SyncError, retryIn: Double?)?
        while let event = await next(events, within: 30) {
            if case .failed(let error, let retryIn) = event {
                failure = (error, retryIn)
                break
            }
        }
        #expect(failure?.error.status == 403)
        #expect(failure.map { $0.retryIn == nil } == true, "a refusal is not retried")
        #expect(await MainActor.run { if case .failed = a.engine.status.phase { true } else { false } })
        try await a.close()
    }
}
