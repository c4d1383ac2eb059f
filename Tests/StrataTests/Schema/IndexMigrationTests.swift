import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// One entity, three releases of its indexes (same name and table; only `indexes` changes).
struct IndexedNoteV1: Entity, Equatable {
    var id: Int64
    var group: Int64
    var label: String
    static let entityName = "IndexedNote"
    static let indexes = [EntityIndex(["group"], name: "notes_by_group"), EntityIndex(["label"])]
}

struct IndexedNoteV2: Entity, Equatable {
    var id: Int64
    var group: Int64
    var label: String
    static let entityName = "IndexedNote"
    static let indexes = [EntityIndex(["group", "label"], name: "notes_by_group")]
}

/// Declared indexes follow the declaration at open; indexes hold no data, so every step is lossless.
@Suite struct IndexMigrationTests {
    private func indexes(_ store: Store) async throws -> [String: String] {
        try await store.read { db in
            var result: [String: String] = [:]
            for row in try db.rows("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'IndexedNote' "
                                   + "AND sql IS NOT NULL") {
                if let name = String.fromDatabaseValue(row.values[0]), let sql = String.fromDatabaseValue(row.values[1]) {
                    result[name] = sql
                }
            }
            return result
        }
    }

    @Test func removedIndexesAreDroppedChangedOnesRebuiltAndTheAppsOwnKept() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        do {
            let store = try await openStore(path, entities: [IndexedNoteV1.self])
            var changes = ChangeSet()
            for id in 0..<50 { changes.insert(IndexedNoteV1(id: Int64(id), group: Int64(id % 5), label: "l\(id)")) }
            try await store.submit(changes).committed()
            // An index the app made itself, in raw SQL: never declared, never Strata's to drop.
            try await store.write { db in try db.execute("CREATE INDEX app_by_label ON IndexedNote (label, \"group\")") }
            #expect(Set(try await indexes(store).keys) == ["notes_by_group", "IndexedNote_label", "app_by_label"])
            try await store.close()
        }
        let store = try await openStore(path, entities: [IndexedNoteV2.self])
        let found = try await indexes(store)
        #expect(Set(found.keys) == ["notes_by_group", "app_by_label"], "the undeclared label index was dropped")
        #expect(found["notes_by_group"]?.contains("(\"group\", \"label\")") == true, "rebuilt on its new attributes: \(found)")
        #expect(store.appliedMigrations.contains("drop index IndexedNote_label"))
        #expect(store.appliedMigrations.contains("drop index notes_by_group"))
        #expect(store.appliedMigrations.contains("create index notes_by_group"))
        #expect(try await store.count(Query<IndexedNoteV2>()) == 50, "no row was touched")
        #expect(try await store.integrityProblems().isEmpty)
        try await store.close()

        // Unchanged declarations change nothing.
        let again = try await openStore(path, entities: [IndexedNoteV2.self])
        #expect(again.appliedMigrations.isEmpty)
    }
}
