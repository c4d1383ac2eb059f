import Foundation
@_spi(Sync) import Strata
import StrataSync
import StrataSyncWire
import StrataTestSupport
import Testing

/// What a push carries: the local history since the last push, as the protocol's entries.
@Suite struct PushBuildingTests {
    @Test func insertsUpdatesAndDeletionsBecomeEntries() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let device = try await TestDevice.open(directory, "a", server: server)
        try await device.save { changes in
            changes.insert(Article.make(1))
            changes.insert(Article.make(2))
            changes.insert(Feed(id: "f", name: "Feed"))
        }
        try await device.save { changes in
            var edited = Article.make(1)
            edited.title = "Edited"
            changes.update(edited)
        }
        try await device.save { $0.updateAll(Article.self, ids: [2], set: ["isStarred": true]) }
        try await device.save { $0.delete(Feed.self, id: "f") }
        try await device.engine.sync()

        let pushes = await server.pushes
        #expect(pushes.map(\.batch) == [1])
        let entries = try #require(pushes.first?.changes)
        // The feed, deleted since it was inserted, is not sent as an upsert: its deletion is.
        #expect(entries.map(\.op) == [.upsert, .upsert, .update, .update, .delete])
        #expect(entries[0].entity == "Article" && entries[0].ids.keys == [.integer(1)])
        // An insert sends every attribute, as stored now (the later update's title included).
        #expect(entries[0].values == ["title": .text("Edited"), "isRead": .integer(0), "isStarred": .integer(0), "summary": .null])
        #expect(entries[1].ids.keys == [.integer(2)] && entries[1].values["title"] == .text("Title 2"))
        // An update of a whole object (ChangeSet's API) names every attribute it wrote; a bulk update only its own.
        #expect(entries[2].ids.keys == [.integer(1)] && entries[2].values["title"] == .text("Edited"))
        #expect(entries[3].ids.keys == [.integer(2)] && entries[3].values == ["isStarred": .integer(1)])
        #expect(entries[4].entity == "Feed" && entries[4].ids.keys == [.text("f")] && entries[4].values.isEmpty)
        // Times follow the hybrid clock: one per transaction, increasing.
        let times = entries.map(\.time)
        #expect(times == times.sorted() && Set(times).count == 4)
        // The server holds what the device holds.
        let live = await server.liveValues()
        #expect(live["Article"]?[.integer(1)]?["title"] == .text("Edited"))
        #expect(live["Feed"]?.isEmpty ?? true)

        // The status tells an app what happened.
        #expect(await MainActor.run { device.engine.status.pushedChanges == 5 && device.engine.status.lastSynced != nil
                                      && device.engine.status.phase == .idle })
        // Nothing new: no push at all.
        try await device.engine.sync()
        #expect(await server.pushes.count == 1)
        try await device.close()
    }

    @Test func aBulkUpdateOfTenThousandIDsIsOneSmallEntry() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let device = try await TestDevice.open(directory, "a", server: server)
        // 10,000 articles among IDs up to 100,000 (every tenth), as if pulled: the engine does not push them.
        let readIDs = stride(from: Int64(0), to: 100_000, by: 10).map { $0 }
        try await device.save { changes in
            changes.transactionAuthor = "sync"
            for id in readIDs { changes.insert(Article(id: id, title: "", isRead: false, isStarred: false, summary: nil)) }
        }
        try await device.engine.sync()
        let pushedBefore = await server.pushes.count
        #expect(pushedBefore == 0)
        try await device.save { $0.updateAll(Article.self, ids: readIDs, set: ["isRead": true]) }
        try await device.engine.sync()

        let pushes = await server.pushes
        #expect(pushes.count == pushedBefore + 1)
        let bulk = try #require(pushes.last)
        #expect(bulk.changes.count == 1)
        #expect(bulk.changes.first?.op == .update && bulk.changes.first?.ids.keys.count == 10_000)
        let encoded = try JSONEncoder().encode(bulk)
        #expect(encoded.count < 20_000, "a 10,000-ID bulk update took \(encoded.count) bytes")
        #expect(String(decoding: encoded, as: UTF8.self).contains("\"deltas\""))
        try await device.close()
    }

    @Test func batchesAreBoundedAndNumberedInOrder() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let device = try await TestDevice.open(directory, "a", server: server) { $0.maxEntriesPerPush = 7 }
        // One transaction of 20 inserts spans three batches; the bulk update of all of them fits in the third.
        try await device.save { changes in for id in Int64(1)...20 { changes.insert(Article.make(id)) } }
        try await device.save { $0.updateAll(Article.self, ids: Array(Int64(1)...20), set: ["isRead": true]) }
        try await device.engine.sync()
        let pushes = await server.pushes
        #expect(pushes.map(\.batch) == [1, 2, 3])
        #expect(pushes.map(\.changes.count) == [7, 7, 7])
        #expect(pushes.last?.changes.last?.op == .update && pushes.last?.changes.last?.ids.keys.count == 20)
        #expect(pushes.flatMap(\.changes).filter { $0.op == .upsert }.flatMap(\.ids.keys) == (1...20).map { SyncKey.integer($0) })
        #expect(await server.liveValues()["Article"]?.count == 20)
        try await device.close()
    }

    @Test func aBatchTooLargeForTheServerIsMadeSmaller() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let device = try await TestDevice.open(directory, "a", server: server) { $0.maxPushBytes = 4_000 }
        let long = String(repeating: "x", count: 300)
        try await device.save { changes in for id in Int64(1)...40 { changes.insert(Article.make(id, title: long)) } }
        try await device.engine.sync()
        let pushes = await server.pushes
        #expect(pushes.count > 3)
        #expect(pushes.allSatisfy { (try? JSONEncoder().encode($0.changes).count) ?? .max <= 4_000 })
        #expect(pushes.flatMap(\.changes).count == 40)
        let live = await server.liveValues()
        #expect(live["Article"]?.count == 40)
        try await device.close()
    }
}
