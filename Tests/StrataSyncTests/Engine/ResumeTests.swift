import Foundation
@_spi(Sync) import Strata
import StrataSync
import StrataSyncWire
import StrataTestSupport
import Testing

/// What survives a failure or a restart: batch numbers, cursors, data, unpushed edits.
@Suite struct ResumeTests {
    @Test func aLostAnswerIsResentWithTheSameBatchNumberAfterARestart() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        var device = try await TestDevice.open(directory, "a", server: server)
        try await device.save { $0.insert(Article.make(1)) }
        try await device.engine.sync()
        try await device.save { $0.insert(Article.make(2)) }
        device.transport.loseNextPushAnswer()
        await #expect { try await device.engine.sync() } throws: { ($0 as? SyncError)?.isTransient == true }
        #expect(await server.pushes.map(\.batch) == [1, 2])

        // Restarted: batch 2 goes again (the server answers "duplicate"), then new edits are batch 3.
        device = try await device.reopened(directory, "a", server: server)
        try await device.save { $0.insert(Article.make(3)) }
        try await device.engine.sync()
        let pushes = await server.pushes
        #expect(pushes.map(\.batch) == [1, 2, 2, 3])
        #expect(pushes[1] == pushes[2], "a batch's content does not change between retries")
        #expect(pushes[3].changes.map(\.ids.keys) == [[.integer(3)]])
        #expect(await server.liveValues()["Article"]?.count == 3)
        try await device.close()
    }

    @Test func aFullPullResumesAtThePageItReached() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let a = try await TestDevice.open(directory, "a", server: server)
        var b = try await TestDevice.open(directory, "b", server: server) { $0.recordsLimit = 2 }
        try await a.save { changes in for id in Int64(1)...5 { changes.insert(Article.make(id)) } }
        try await a.engine.sync()
        await server.pruneLog()
        // The pull (cursor expired) and two pages of records go through; the third page fails.
        b.transport.failAfter(requests: 3, SyncError(.server, "failed", status: 502))
        await #expect { try await b.engine.sync() } throws: { ($0 as? SyncError)?.code == .server }
        #expect(try await b.articles().map(\.id) == [1, 2, 3, 4])
        b = try await b.reopened(directory, "b", server: server)
        try await b.engine.sync()
        #expect(try await b.articles().map(\.id) == [1, 2, 3, 4, 5])
        let records = b.transport.requests.filter { $0.hasPrefix("GET /v1/records") }
        #expect(records == ["GET /v1/records after=Article/4"], "the restarted device asked for the third page only")
        #expect(try await b.store.storedValue(forKey: "strata.sync.cursor") == .text(String(await server.sequence)))
        try await a.close()
        try await b.close()
    }

    @Test func aPrunedHistoryIsReplacedByAnUploadOfEveryObject() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        // A store used before it synced, whose history was pruned.
        var configuration = StoreConfiguration()
        configuration.changeLogLimit = 10
        let old = try await Store.open(at: directory.path("old.sqlite"), entities: [Article.self, Feed.self],
                                       configuration: configuration)
        for id in Int64(1)...30 {
            var changes = ChangeSet()
            changes.insert(Article.make(id))
            try await old.submit(changes).committed()
        }
        try await old.pruneHistory()
        await #expect(throws: StrataError.self) { for try await _ in old.history(since: ChangeToken(generation: 0)) {} }
        try await old.close()

        let device = try await TestDevice.open(directory, "old", server: server) { $0.maxEntriesPerPush = 7 }
        try await device.save { $0.updateAll(Article.self, ids: [1], set: ["isRead": true]) }
        try await device.engine.sync()
        let live = await server.liveValues()["Article"] ?? [:]
        #expect(live.count == 30)
        #expect(live[.integer(1)]?["isRead"] == .integer(1))
        let pushes = await server.pushes
        #expect(pushes.map(\.batch) == Array(1...Int64(pushes.count)))
        #expect(pushes.prefix(5).map(\.changes.count) == [7, 7, 7, 7, 2], "the upload, in batches")
        try await device.engine.sync()
        #expect(await server.pushes.count == pushes.count, "the upload is not repeated")
        try await device.close()
    }

    @Test func aDeviceKeepsOneIDAcrossConcurrentFirstUsesAndRestarts() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        var device = try await TestDevice.open(directory, "a", server: server)
        let engine = device.engine
        async let first = engine.deviceID()
        async let second = engine.deviceID()
        let (one, two) = try await (first, second)
        #expect(one == two)
        device = try await device.reopened(directory, "a", server: server)
        #expect(try await device.engine.deviceID() == one)
        #expect(try await device.store.storedValue(forKey: "strata.sync.device") == .text(one))
        try await device.close()
    }

    @Test func aTransientFailureLosesNothing() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let device = try await TestDevice.open(directory, "a", server: server)
        try await device.save { $0.insert(Article.make(1)) }
        device.transport.failNext(SyncError(.server, "the server failed", status: 503))
        await #expect { try await device.engine.sync() } throws: { ($0 as? SyncError)?.code == .server }
        #expect(await MainActor.run { if case .offline = device.engine.status.phase { true } else { false } })
        try await device.engine.sync()
        #expect(await server.liveValues()["Article"]?.keys.sorted { $0.description < $1.description } == [.integer(1)])
        #expect(await MainActor.run { device.engine.status.phase == .idle })
        try await device.close()
    }

    @Test func aRefusalSaysWhatAndIsNotTransient() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let device = try await TestDevice.open(directory, "a", server: server)
        // The space knows Article with a text title; this device's schema says integer.
        _ = try await server.sendSchema(SyncSchema(entities: ["Article": .init(keyType: .integer, attributes: [
            "title": .init(type: .integer, optional: false)])]))
        try await device.save { $0.insert(Article.make(1)) }
        await #expect { try await device.engine.sync() } throws: { error in
            guard let error = error as? SyncError else { return false }
            return error.code == .rejected && !error.isTransient && error.status == 409
                && error.protocolError?.error == .schemaMismatch && error.message.contains("Article.title")
        }
        try await device.close()
    }

    @Test func aPulledPageAndItsCursorCommitTogether() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let a = try await TestDevice.open(directory, "a", server: server)
        var b = try await TestDevice.open(directory, "b", server: server) { $0.pullLimit = 2 }
        try await a.save { changes in for id in Int64(1)...5 { changes.insert(Article.make(id)) } }
        try await a.engine.sync()
        try await b.engine.sync()
        #expect(try await b.articles().count == 5)
        let cursor = try await b.store.storedValue(forKey: "strata.sync.cursor")
        #expect(cursor == .text(String(await server.sequence)))

        // A page the device cannot store (a title that is not text) leaves neither its rows nor its cursor.
        try await a.save { $0.insert(Article.make(6)) }
        try await a.engine.sync()
        try await server.corruptLastEntry(attribute: "title", value: .integer(7))
        await #expect { try await b.engine.sync() } throws: { error in
            (error as? SyncError)?.code == .invalidData && "\(error)".contains("Article.title")
        }
        #expect(try await b.store.storedValue(forKey: "strata.sync.cursor") == cursor)
        #expect(try await b.store.fetch(Article.self, id: 6) == nil)

        // Restarted, the page is pulled again once fixed.
        try await server.corruptLastEntry(attribute: "title", value: .text("Title 6"))
        b = try await b.reopened(directory, "b", server: server)
        try await b.engine.sync()
        #expect(try await b.store.fetch(Article.self, id: 6) == Article.make(6))
        #expect(try await b.store.storedValue(forKey: "strata.sync.cursor") == .text(String(await server.sequence)))
        try await a.close()
        try await b.close()
    }

    @Test func anExpiredCursorPullsEverythingAndKeepsUnpushedEdits() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let a = try await TestDevice.open(directory, "a", server: server)
        let b = try await TestDevice.open(directory, "b", server: server) { $0.recordsLimit = 2 }
        try await a.save { changes in for id in Int64(1)...3 { changes.insert(Article.make(id)) } }
        try await a.engine.sync()
        try await b.engine.sync()
        // Offline, B renames 1; meanwhile A marks every article read, deletes 3, adds 4, and the log is pruned.
        try await b.save { $0.updateAll(Article.self, ids: [1], set: ["title": "B's"]) }
        try await a.save { changes in
            changes.updateAll(Article.self, ids: [1, 2], set: ["isRead": true])
            changes.delete(Article.self, id: 3)
            changes.insert(Article.make(4))
        }
        try await a.engine.sync()
        await server.pruneLog()
        let events = await b.engine.events()
        try await b.engine.sync()
        let articles = try await b.articles()
        #expect(articles.map(\.id) == [1, 2, 4])
        #expect(articles.first == Article(id: 1, title: "B's", isRead: true, isStarred: false, summary: nil))
        #expect(await server.liveValues()["Article"]?[.integer(1)]?["title"] == .text("B's"))
        #expect(await next(events, matching: { $0 == .fullPullStarted }))
        try await a.close()
        try await b.close()
    }
}

/// Whether `stream` yields an element matching `predicate` among those already buffered.
func next(_ stream: AsyncStream<SyncEvent>, matching predicate: (SyncEvent) -> Bool) async -> Bool {
    for await event in stream {
        if predicate(event) { return true }
        if event == .idle { return false }
    }
    return false
}
