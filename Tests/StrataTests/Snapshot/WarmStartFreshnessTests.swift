import Foundation
@_spi(Testing) @testable import Strata
import StrataTestSupport
import Testing

/// A warm start is never older than the database: whatever commits while the store is open —
/// the app's contexts, ``Store/write(_:)``, another connection or process — the next
/// `openWarm` shows exactly what SQLite holds.
@MainActor
@Suite struct WarmStartFreshnessTests {
    enum OutsideWriter: String, CaseIterable, CustomTestStringConvertible {
        /// The store's own raw SQL, which bypasses change sets.
        case storeWrite
        /// Another connection to the file, as another process or the `sqlite3` shell would be.
        case otherConnection
        var testDescription: String { rawValue }
    }

    private static let entities: [any Entity.Type] = [ResidentArticle.self]

    private func seed(_ path: String) async throws -> Store {
        let store = try await Store.open(at: path, entities: Self.entities)
        var changes = ChangeSet()
        for index in 0..<10 { changes.insert(ResidentArticle(index)) }
        try store.submit(changes)
        try await store.persist()
        return store
    }

    /// Changes r-1's title, deletes r-2 and inserts r-100, outside the store's change sets.
    private func writeOutside(_ writer: OutsideWriter, _ store: Store, path: String) async throws {
        switch writer {
        case .storeWrite:
            try await store.write { db in
                try db.execute("UPDATE ResidentArticle SET title = 'changed outside' WHERE id = 'r-1'")
                try db.execute("DELETE FROM ResidentArticle WHERE id = 'r-2'")
                try db.execute("INSERT INTO ResidentArticle (id, feedID, title, published, isRead, isStarred) "
                               + "VALUES ('r-100', 3, 'inserted outside', 5, 0, 0)")
            }
        case .otherConnection:
            let other = try await Store.open(at: path, entities: Self.entities)
            var changes = ChangeSet()
            var changed = ResidentArticle(1)
            changed.title = "changed outside"
            changes.update(changed)
            changes.delete(ResidentArticle.self, id: "r-2")
            var inserted = ResidentArticle(100)
            inserted.title = "inserted outside"
            changes.insert(inserted)
            try other.submit(changes)
            try await other.close()
        }
    }

    @Test(arguments: OutsideWriter.allCases)
    func aWarmStartAfterAnOutsideWriteAndAnAppCommitShowsTheDatabase(_ writer: OutsideWriter) async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        do {
            let store = try await seed(db)
            let main = store.mainContext
            try await main.loadResidentEntities()
            try await writeOutside(writer, store, path: db)
            // The app commits afterwards: this commit's generation counts the outside write too.
            try main.insert(ResidentArticle(50))
            try main.save()
            try await store.persist()
            // The app's commit found the outside write and told the contexts of it.
            await main.mergeAccepted()
            #expect(main.object(ResidentArticle.self, id: "r-1")?.title == "changed outside", "the main context merged it")
            #expect(main.object(ResidentArticle.self, id: "r-2") == nil)
            try await main.writeSnapshot(to: file)
            try await store.close()
        }
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        guard case .caughtUp = warm.outcome else {
            Issue.record("expected a catch-up, got \(warm.outcome)")
            try await warm.store.close()
            return
        }
        let shown = warm.mainContext.objects(ResidentArticle.self)
        let stored = try await warm.store.fetch(Query<ResidentArticle>(sortedBy: [Attribute("id").ascending]))
        #expect(shown == stored)
        #expect(warm.mainContext.object(ResidentArticle.self, id: "r-1")?.title == "changed outside")
        #expect(warm.mainContext.object(ResidentArticle.self, id: "r-2") == nil)
        #expect(warm.mainContext.object(ResidentArticle.self, id: "r-100")?.title == "inserted outside")
        #expect(warm.mainContext.object(ResidentArticle.self, id: "r-50") != nil)
        try await warm.store.close()
    }

    @Test func withoutOutsideWritesTheSnapshotClaimsTheNewestGeneration() async throws {
        // The floor only moves when someone else wrote: an app alone keeps exact warm starts.
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        do {
            let store = try await seed(db)
            let main = store.mainContext
            try await main.loadResidentEntities()
            try main.insert(ResidentArticle(50))
            try main.save()
            try await store.persist()
            try await main.writeSnapshot(to: file)
            try await store.close()
        }
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        #expect(warm.outcome == .used)
        try await warm.store.close()
    }

    @Test func twoFailuresAroundTheCapturedStateRefuseTheSnapshot() async throws {
        // The main context merges change set A (it will fail) and captures; then B (it will fail
        // too, later in the same batch) is accepted. Both fail in one coalesced commit. The
        // newest failure (B) is past the captured state; A, inside it, must still refuse.
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        let store = try await seed(db)
        let main = store.mainContext
        try await main.loadResidentEntities()

        let gate = QueueGate()
        let holding = Task.detached { try await store.read { _ in _ = gate.hold() } }
        #expect(await waitOff(gate.entered))

        var failingA = ChangeSet()
        var ghost = ResidentArticle(1)
        ghost.title = "never committed"
        failingA.update(ghost)
        failingA.update(ResidentArticle(404))       // missing: the whole change set fails
        let submittedA = try store.submit(failingA)
        await main.mergeAccepted()
        #expect(main.object(ResidentArticle.self, id: "r-1")?.title == "never committed")

        let writing = Task { @MainActor in try await main.writeSnapshot(to: file) }
        // The snapshot has captured its state once it waits for it to be committed.
        while store.pipeline.withLock({ $0.waiters.isEmpty }) { await Task.yield() }

        var failingB = ChangeSet()
        failingB.update(ResidentArticle(405))
        let submittedB = try store.submit(failingB)
        gate.release()
        try await holding.value

        let refusal = await #expect(throws: StrataError.self) { try await writing.value }
        #expect(refusal?.code == .invalidSnapshot)
        #expect(!FileManager.default.fileExists(atPath: file), "no archive of a rejected change set")
        await #expect(throws: StrataError.self) { try await submittedA.committed() }
        await #expect(throws: StrataError.self) { try await submittedB.committed() }

        // Once the correction is merged, a snapshot is written and shows what SQLite has.
        try await main.writeSnapshot(to: file)
        try await store.close()
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        #expect(warm.outcome == .used)
        #expect(warm.mainContext.object(ResidentArticle.self, id: "r-1")?.title == "Title 1")
        #expect(warm.mainContext.object(ResidentArticle.self, id: "r-404") == nil)
        try await warm.store.close()
    }

    @Test func aDirectoryAtTheSnapshotPathIsReportedAsSuch() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
        do { _ = try await seed(db) }
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        guard case .coldStart(let error) = warm.outcome, error.snapshotRejection == .unreadable else {
            Issue.record("expected an unreadable snapshot, got \(warm.outcome)")
            try await warm.store.close()
            return
        }
        #expect(error.message.contains("is a directory"))
        #expect(error.path == file)
        #expect(warm.mainContext.objects(ResidentArticle.self).count == 10, "the cold start still shows the data")
        try await warm.store.close()
    }
}
