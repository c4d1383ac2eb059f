import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// An entity whose `init(row:)` counts the values it builds: shows when a context built a value
/// and when it handed out one it kept. Used by this suite only (which runs serialized).
private struct CachedNote: Entity, Equatable {
    var id: String
    var feedID: Int64
    var title: String
    var isRead: Bool

    static let isResident = true
    static let indexes = [EntityIndex(["feedID", "isRead"])]
    static let built = Counter()

    init(_ index: Int, title: String? = nil) {
        id = "n-\(index)"
        feedID = Int64(index % 3)
        self.title = title ?? "Note \(index)"
        isRead = false
    }

    init(row: inout RowReader) throws {
        id = try row.read()
        feedID = try row.read()
        title = try row.read()
        isRead = try row.read()
        Self.built.increment()
    }

    func encode(row: inout RowWriter) throws {
        try row.write(id)
        try row.write(feedID)
        try row.write(title)
        try row.write(isRead)
    }
}

/// A context keeps the values it built from saved copies (`ValueCache`, bounded by
/// `StoreConfiguration.valueCacheLimit`) and hands one out again only while its copy is
/// unchanged: never a value older than what the context shows.
@MainActor
@Suite(.serialized) struct ValueCacheTests {
    private func seeded(_ directory: TemporaryDirectory, count: Int = 10, limit: Int? = nil) async throws
        -> (Store, MainContext) {
        var configuration = StoreConfiguration()
        if let limit { configuration.valueCacheLimit = limit }
        let store = try await Store.open(at: directory.path("s.sqlite"), entities: [CachedNote.self], configuration: configuration)
        var changes = ChangeSet()
        for index in 0..<count { changes.insert(CachedNote(index)) }
        try await store.submit(changes).committed()
        let main = store.mainContext
        try await main.loadResidentEntities()
        return (store, main)
    }

    /// How many values `body` built.
    private func building(_ body: () throws -> Void) rethrows -> Int {
        let before = CachedNote.built.count
        try body()
        return CachedNote.built.count - before
    }

    /// A worker saves `notes`: updates of stored objects, or new ones.
    private func remoteSave(_ store: Store, _ notes: [CachedNote]) async throws {
        let worker = store.makeWorkerContext(name: "remote")
        _ = try await worker.fetch(Query<CachedNote>())
        try await worker.perform { worker in
            for note in notes {
                if worker.object(CachedNote.self, id: note.id) != nil { try worker.update(note) } else { try worker.insert(note) }
            }
            try worker.save()
        }
    }

    /// What `body` returns, and how many values it built.
    private func built<T>(_ body: () throws -> T) rethrows -> (T, Int) {
        let before = CachedNote.built.count
        let result = try body()
        return (result, CachedNote.built.count - before)
    }

    @Test(.hangWatchdog)
    func aValueReadAgainIsNotBuiltAgain() async throws {
        let directory = try TemporaryDirectory()
        let (store, main) = try await seeded(directory)
        let first = built { main.object(CachedNote.self, id: "n-1") }
        #expect(first.0 == CachedNote(1) && first.1 == 1)
        let again = built { main.object(CachedNote.self, id: "n-1") }
        #expect(again.0 == CachedNote(1) && again.1 == 0)
        // A query builds only what it has not kept.
        let query = Query<CachedNote>(where: Attribute("feedID") == 1)
        let matches = try built { try main.objects(matching: query) }
        #expect(matches.0 == [1, 4, 7].map { CachedNote($0) } && matches.1 == 2)
        let matchesAgain = try built { try main.objects(matching: query) }
        #expect(matchesAgain.0 == matches.0 && matchesAgain.1 == 0)
        try await store.close()
    }

    @Test(.hangWatchdog)
    func aChangeMergedInPlaceIsBuiltFromItsNewCopy() async throws {
        let directory = try TemporaryDirectory()
        let (store, main) = try await seeded(directory)
        _ = main.objects(CachedNote.self)
        try await remoteSave(store, [CachedNote(2, title: "remote")])
        await main.mergeAccepted()
        #expect(main.preparationCount == 0)
        let changed = built { main.object(CachedNote.self, id: "n-2") }
        #expect(changed.0?.title == "remote" && changed.1 == 1)
        let unchanged = built { main.object(CachedNote.self, id: "n-3") }
        #expect(unchanged.0 == CachedNote(3) && unchanged.1 == 0)
        try await store.close()
    }

    @Test(.hangWatchdog)
    func aBulkUpdateOrADeletionIsNeverHiddenByAKeptValue() async throws {
        let directory = try TemporaryDirectory()
        let (store, main) = try await seeded(directory)
        _ = main.objects(CachedNote.self)
        // Patched in place from the main context, and by another context's change set.
        try await main.updateAll(CachedNote.self, ids: ["n-1"], set: ["isRead": true])
        #expect(main.object(CachedNote.self, id: "n-1")?.isRead == true)
        var changes = ChangeSet()
        changes.updateAll(CachedNote.self, ids: ["n-4"], set: ["title": "patched"])
        changes.delete(CachedNote.self, id: "n-5")
        try await store.submit(changes).committed()
        await main.mergeAccepted()
        #expect(main.object(CachedNote.self, id: "n-4")?.title == "patched")
        #expect(main.object(CachedNote.self, id: "n-5") == nil)
        // The freed slot goes to the next new object: its value is its own.
        try await remoteSave(store, [CachedNote(99)])
        await main.mergeAccepted()
        #expect(main.object(CachedNote.self, id: "n-99") == CachedNote(99))
        #expect(main.object(CachedNote.self, id: "n-5") == nil)
        #expect(main.objects(CachedNote.self).count == 10)
        try await store.close()
    }

    @Test(.hangWatchdog)
    func aPreparedMergeKeepsTheValuesOfUnchangedObjectsOnly() async throws {
        let directory = try TemporaryDirectory()
        let (store, main) = try await seeded(directory)
        main.preparedMergeThreshold = 2
        #expect(building { _ = main.objects(CachedNote.self) } == 10)
        try await remoteSave(store, [CachedNote(3, title: "remote"), CachedNote(6, title: "remote")])
        await main.mergeAccepted()
        #expect(main.preparationCount == 1)
        // Only the two changed objects are built again.
        let (shown, rebuilt) = built { main.objects(CachedNote.self) }
        #expect(shown.filter { $0.title == "remote" }.map(\.id).sorted() == ["n-3", "n-6"])
        #expect(shown.count == 10 && rebuilt == 2)
        try await store.close()
    }

    @Test(.hangWatchdog)
    func theLimitBoundsTheValuesKeptAndZeroKeepsNone() async throws {
        let directory = try TemporaryDirectory()
        let (store, main) = try await seeded(directory, limit: 4)
        for index in 0..<10 { _ = main.object(CachedNote.self, id: "n-\(index)") }
        let table = try main.graph.table(CachedNote.self)
        #expect(table.values.count <= 4)
        // The most recently read is kept: reading it again builds nothing.
        #expect(building { _ = main.object(CachedNote.self, id: "n-9") } == 0)

        let other = try TemporaryDirectory()
        let (otherStore, uncached) = try await seeded(other, limit: 0)
        #expect(building {
            _ = uncached.object(CachedNote.self, id: "n-1")
            _ = uncached.object(CachedNote.self, id: "n-1")
        } == 2)

        // Workers keep none, whatever the limit (4 in this store): they read objects to change them, once.
        let worker = store.makeWorkerContext(name: "reader")
        _ = try await worker.fetch(Query<CachedNote>())
        let before = CachedNote.built.count
        _ = await worker.perform { worker in
            (worker.object(CachedNote.self, id: "n-2"), worker.object(CachedNote.self, id: "n-2"))
        }
        #expect(CachedNote.built.count - before == 2)
        try await otherStore.close()
        try await store.close()
    }

    /// The cache itself, as the engine keeps it beside its table: a value is handed out for the
    /// version it was built from only, a write (even at the same version), a patch or a removal
    /// forgets it, and a full cache keeps the most recently used half.
    @Test func aTableHandsOutAValueOnlyForTheVersionItWasBuiltFrom() throws {
        let schema = try SchemaRegistry([CachedNote.self]).schema(for: CachedNote.self)
        let table = EntityTable(type: CachedNote.self, schema: schema, valueCacheLimit: 4)
        func row(_ index: Int, _ title: String) -> [DatabaseValue] {
            [.text("n-\(index)"), .integer(Int64(index)), .text(title), .integer(0)]
        }
        func merge(_ rows: [[DatabaseValue]], asOf sequence: UInt64) throws {
            var changes = ContextChange.EntityChanges()
            try table.reload(rows, deleted: [], asOf: sequence, includeNew: true, policy: .default, into: &changes)
        }
        func slot(_ index: Int) -> Int { table.saved.slot(of: .text("n-\(index)"))! }
        func cached(_ index: Int) -> Bool {
            table.values.value(at: slot(index), version: table.records.version(at: slot(index))) != nil
        }
        func read(_ index: Int) throws { _ = try table.visible(CachedNote.self, .text("n-\(index)")) }

        try merge((0..<4).map { row($0, "first") }, asOf: 1)
        for index in 0..<4 { try read(index) }
        #expect((0..<4).allSatisfy(cached))
        try merge([row(0, "newer")], asOf: 2)
        #expect(!cached(0), "a newer version of the row")
        try merge([row(1, "second")], asOf: 1)
        #expect(!cached(1), "a rewritten row, even at the same version")
        var changes = ContextChange.EntityChanges()
        try table.merge([.bulkUpdate(entity: schema.name, target: .ids([.text("n-2")]),
                                     assignments: [ChangeSet.Assignment(attribute: "title", value: .text("patched"))])],
                        run: 0..<1, sequence: 3, isOwn: false, registersNew: true, policy: .default, into: &changes)
        #expect(!cached(2), "a patched cell")
        let freed = slot(3)
        table.forget([.text("n-3")])
        try merge([row(7, "new")], asOf: 4)
        #expect(slot(7) == freed)
        #expect(!cached(7), "a freed slot reused")

        // Full (4 kept): keeping a fifth keeps the two most recently used and the new one.
        for index in [0, 1, 2, 7] { try read(index) }
        #expect(table.values.count == 4)
        try merge([row(8, "fifth")], asOf: 5)
        try read(8)
        #expect(table.values.count == 3)
        #expect([0, 1, 2, 7].map(cached) == [false, false, true, true])
        #expect(cached(8))
    }
}
