import Foundation
@testable import Strata
import StrataTestSupport
import Testing

// Versions of a few entities, as successive app releases declare them. Each pair shares its
// entity name and table; every test writes rows with the first and opens with the next.

private struct NoteV1: Entity, Equatable {
    var id: Int64
    var title: String
    var done: Bool
    static let entityName = "EvoNote"
    static let tableName = "evo_notes"
    static let fullTextAttributes = ["title"]
    static let indexes = [EntityIndex(["done"])]
}

/// `title` renamed `headline`, declared.
private struct NoteRenamed: Entity, Equatable {
    var id: Int64
    var headline: String
    var done: Bool
    static let entityName = "EvoNote"
    static let tableName = "evo_notes"
    static let fullTextAttributes = ["headline"]
    static let indexes = [EntityIndex(["done"])]
    static let formerAttributeNames = ["headline": "title"]
}

/// The same rename, not declared: to Strata, `title` went and `headline` came.
private struct NoteRenamedSilently: Entity, Equatable {
    var id: Int64
    var headline: String
    var done: Bool
    static let entityName = "EvoNote"
    static let tableName = "evo_notes"
}

/// `done: Bool` → `done: Int`: every stored value kept as it is.
private struct NoteDoneCount: Entity, Equatable {
    var id: Int64
    var title: String
    var done: Int
    static let entityName = "EvoNote"
    static let tableName = "evo_notes"
    static let fullTextAttributes = ["title"]
    static let indexes = [EntityIndex(["done"])]
}

/// `done: Bool` → `done: String`: refused unless a named migration converts the values.
private struct NoteDoneText: Entity, Equatable {
    var id: Int64
    var title: String
    var done: String
    static let entityName = "EvoNote"
    static let tableName = "evo_notes"
    static let fullTextAttributes = ["title"]
    static let indexes = [EntityIndex(["done"])]
}

/// A new non-optional attribute without a default.
private struct NoteWithPriority: Entity, Equatable {
    var id: Int64
    var title: String
    var done: Bool
    var priority: Int
    static let entityName = "EvoNote"
    static let tableName = "evo_notes"
    static let fullTextAttributes = ["title"]
    static let indexes = [EntityIndex(["done"])]
}

/// The key's type changed.
private struct NoteTextKey: Entity, Equatable {
    var id: String
    var title: String
    var done: Bool
    static let entityName = "EvoNote"
    static let tableName = "evo_notes"
}

private struct ItemV1: Entity, Equatable {
    var id: String
    var name: String
    var legacy: String?
    var note: String?
    static let entityName = "EvoItem"
    static let tableName = "evo_items"
}

/// `legacy` removed; `note` non-optional now.
private struct ItemV2: Entity, Equatable {
    var id: String
    var name: String
    var note: String
    static let entityName = "EvoItem"
    static let tableName = "evo_items"
}

/// `legacy` removed, and its values may go.
private struct ItemDiscarding: Entity, Equatable {
    var id: String
    var name: String
    var note: String?
    static let entityName = "EvoItem"
    static let tableName = "evo_items"
    static let discardedAttributes: Set<String> = ["legacy"]
}

/// `name` optional now (its column loses NOT NULL: a rebuild), `legacy` and `note` kept.
private struct ItemOptionalName: Entity, Equatable {
    var id: String
    var name: String?
    var legacy: String?
    var note: String?
    static let entityName = "EvoItem"
    static let tableName = "evo_items"
    static let indexes = [EntityIndex(["name"])]
}

/// The note without its full-text index.
private struct NoteWithoutSearch: Entity, Equatable {
    var id: Int64
    var title: String
    var done: Bool
    static let entityName = "EvoNote"
    static let tableName = "evo_notes"
}

/// An entity a later version stops declaring.
private struct Retired: Entity, Equatable {
    var id: String
    var value: Int
    static let entityName = "EvoRetired"
    static let tableName = "evo_retired"
}

// MARK: Helpers

private func write<E: Entity>(_ objects: [E], to path: String) async throws {
    let store = try await openStore(path, entities: [E.self])
    var changes = ChangeSet()
    objects.forEach { changes.insert($0) }
    try await store.submit(changes).committed()
    try await store.close()
}

/// Opens `path` with `type` expecting a refusal that names `attribute` and says each of
/// `mentions`, and checks the file is byte for byte what it was.
private func expectRefused<E: Entity>(_ type: E.Type, at path: String, attribute: String, mentions: [String],
                                      migrations: [Migration] = [],
                                      sourceLocation: SourceLocation = #_sourceLocation) async {
    let before = FileState(path)
    let error = await #expect(throws: StrataError.self, sourceLocation: sourceLocation) {
        _ = try await openStore(path, entities: [E.self], migrations: migrations)
    }
    let text = String(describing: error)
    #expect(error?.code == .incompatibleSchema, "\(text)", sourceLocation: sourceLocation)
    #expect(error?.entity == E.entityName, "\(text)", sourceLocation: sourceLocation)
    #expect(error?.attribute == attribute, "\(text)", sourceLocation: sourceLocation)
    #expect(error?.path == path, "\(text)", sourceLocation: sourceLocation)
    for mention in mentions { #expect(error?.message.contains(mention) == true, "\(mention) in \(text)", sourceLocation: sourceLocation) }
    #expect(FileState(path) == before, "the refused open changed the file", sourceLocation: sourceLocation)
}

private let notes = [NoteV1(id: 1, title: "swift concurrency", done: true), NoteV1(id: 2, title: "linux builds", done: false)]

/// Every change the schema diff classifies, each with rows present: the values after an
/// accepted change, or the exact refusal and the file unchanged.
@Suite struct SchemaEvolutionTests {
    @Test func aDeclaredRenameKeepsEveryValueIndexAndFullTextEntry() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("rename.sqlite")
        try await write(notes, to: path)

        let store = try await openStore(path, entities: [NoteRenamed.self])
        #expect(store.appliedMigrations.contains("rename column evo_notes.title to headline"))
        #expect(try await store.fetch(Query<NoteRenamed>()) == [NoteRenamed(id: 1, headline: "swift concurrency", done: true),
                                                                NoteRenamed(id: 2, headline: "linux builds", done: false)])
        #expect(try await store.fetch(Query<NoteRenamed>(where: .matches("concurrency"))).map(\.id) == [1])
        #expect(try await store.fetch(Query<NoteRenamed>(where: Attribute("done") == false)).map(\.id) == [2])
        let columns = try await store.read { db in try db.columns(in: "evo_notes").map(\.name) }
        #expect(columns == ["id", "headline", "done"])
        var changes = ChangeSet()
        changes.insert(NoteRenamed(id: 3, headline: "renamed columns", done: false))
        try await store.submit(changes).committed()
        #expect(try await store.fetch(Query<NoteRenamed>(where: .matches("renamed"))).map(\.id) == [3])
        try await store.close()

        // Opening again changes nothing more.
        let again = try await openStore(path, entities: [NoteRenamed.self])
        #expect(again.appliedMigrations.isEmpty)
    }

    @Test func anUndeclaredRenameIsRefusedWithTheWayOut() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("silent.sqlite")
        try await write(notes, to: path)
        await expectRefused(NoteRenamedSilently.self, at: path, attribute: "headline",
                            mentions: ["without a default", "2 rows", "formerAttributeNames", "Nothing was changed"])
        // The old declaration still opens the file, values intact.
        let store = try await openStore(path, entities: [NoteV1.self])
        #expect(try await store.fetch(Query<NoteV1>()) == notes)
    }

    @Test func aTypeChangeThatKeepsEveryValueIsAutomatic() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bool-int.sqlite")
        try await write(notes, to: path)
        let store = try await openStore(path, entities: [NoteDoneCount.self])
        #expect(try await store.fetch(Query<NoteDoneCount>()).map(\.done) == [1, 0])
        #expect(try await store.fetch(Query<NoteDoneCount>(where: .matches("linux"))).map(\.id) == [2])
    }

    @Test func aTypeChangeThatWouldChangeValuesIsRefusedUntilAMigrationConvertsThem() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("bool-text.sqlite")
        try await write(notes, to: path)
        await expectRefused(NoteDoneText.self, at: path, attribute: "done",
                            mentions: ["stored as bool", "declared as text", "2 of the 2 stored values", "named migration"])

        let convert = Migration("done as words") { db in
            try db.execute("UPDATE evo_notes SET done = CASE done WHEN 1 THEN 'yes' ELSE 'no' END")
        }
        let store = try await openStore(path, entities: [NoteDoneText.self], migrations: [convert])
        #expect(store.appliedMigrations.contains("done as words"))
        #expect(store.appliedMigrations.contains("rebuild table evo_notes"))
        #expect(try await store.fetch(Query<NoteDoneText>()).map(\.done) == ["yes", "no"])
        // The rebuilt table reads and writes as declared: TEXT affinity, its index and full-text entries back.
        let column = try await store.read { db in try db.columns(in: "evo_notes").first { $0.name == "done" }?.type }
        #expect(column == "TEXT")
        var changes = ChangeSet()
        changes.insert(NoteDoneText(id: 3, title: "numbers stay text", done: "42"))
        try await store.submit(changes).committed()
        #expect(try await store.fetch(NoteDoneText.self, id: 3)?.done == "42")
        #expect(try await store.fetch(Query<NoteDoneText>(where: .matches("swift"))).map(\.id) == [1])
        #expect(try await store.fetch(Query<NoteDoneText>(where: Attribute("done") == "no")).map(\.id) == [2])
        let indexes = try await store.read { db in try db.indexes(on: "evo_notes") }
        #expect(indexes.contains("evo_notes_done"))
    }

    @Test func aRowByRowMigrationConvertsValuesInSwift() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("row-by-row.sqlite")
        try await write(notes, to: path)
        // Each row read, its new value computed in Swift from several columns, written back.
        let describe = Migration("done described") { db in
            for row in try db.rows("SELECT id, title, done FROM evo_notes ORDER BY id") {
                guard case .integer(let id)? = row["id"], case .text(let title)? = row["title"] else { continue }
                let done = row["done"] == .integer(1)
                try db.execute("UPDATE evo_notes SET done = ? WHERE id = ?",
                               [.text((done ? "finished: " : "open: ") + title), .integer(id)])
            }
        }
        let store = try await openStore(path, entities: [NoteDoneText.self], migrations: [describe])
        #expect(try await store.fetch(Query<NoteDoneText>()).map(\.done)
                == ["finished: swift concurrency", "open: linux builds"])
    }

    @Test func aNewRequiredAttributeWithoutADefaultIsRefusedOnlyWhenRowsExist() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("priority.sqlite")
        try await write(notes, to: path)
        await expectRefused(NoteWithPriority.self, at: path, attribute: "priority",
                            mentions: ["non-optional integer without a default", "attributeDefaults"])

        let empty = directory.path("empty.sqlite")
        try await write([NoteV1](), to: empty)
        let store = try await openStore(empty, entities: [NoteWithPriority.self])
        #expect(store.appliedMigrations.contains("add column evo_notes.priority"))
    }

    @Test func aChangedPrimaryKeyIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("key.sqlite")
        try await write(notes, to: path)
        await expectRefused(NoteTextKey.self, at: path, attribute: "id", mentions: ["primary key changed"])
    }

    @Test func aRemovedAttributeGoesOnlyWhenEmptyOrDiscarded() async throws {
        let directory = try TemporaryDirectory()
        let holding = directory.path("holding.sqlite")
        try await write([ItemV1(id: "a", name: "A", legacy: "keep me", note: "n")], to: holding)
        await expectRefused(ItemV2.self, at: holding,
                            attribute: "legacy", mentions: ["holding 1 values", "discardedAttributes"])
        let discarding = try await openStore(holding, entities: [ItemDiscarding.self])
        #expect(discarding.appliedMigrations.contains("drop column evo_items.legacy"))
        #expect(try await discarding.fetch(Query<ItemDiscarding>()) == [ItemDiscarding(id: "a", name: "A", note: "n")])

        let empty = directory.path("empty-legacy.sqlite")
        try await write([ItemV1(id: "a", name: "A", legacy: nil, note: "n")], to: empty)
        let dropped = try await openStore(empty, entities: [ItemV2.self])
        #expect(dropped.appliedMigrations.contains("drop column evo_items.legacy"))
        #expect(try await dropped.fetch(Query<ItemV2>()) == [ItemV2(id: "a", name: "A", note: "n")])
    }

    @Test func nullsInAnAttributeMadeNonOptionalAreRefusedUntilFilled() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("nulls.sqlite")
        try await write([ItemV1(id: "a", name: "A", legacy: nil, note: nil), ItemV1(id: "b", name: "B", legacy: nil, note: "b")],
                        to: path)
        await expectRefused(ItemV2.self, at: path, attribute: "note", mentions: ["1 rows hold NULL", "non-optional"])
        let fill = Migration("fill notes") { db in try db.execute("UPDATE evo_items SET note = '' WHERE note IS NULL") }
        let store = try await openStore(path, entities: [ItemV2.self], migrations: [fill])
        #expect(try await store.fetch(Query<ItemV2>()).map(\.note) == ["", "b"])
    }

    @Test func anAttributeMadeOptionalRebuildsTheTableKeepingEveryRow() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("optional.sqlite")
        let items = (0..<50).map { ItemV1(id: "i\($0)", name: "name \($0)", legacy: $0 % 2 == 0 ? "l\($0)" : nil, note: nil) }
        try await write(items, to: path)
        let store = try await openStore(path, entities: [ItemOptionalName.self])
        #expect(store.appliedMigrations.contains("rebuild table evo_items"))
        let fetched = try await store.fetch(Query<ItemOptionalName>())
        #expect(Dictionary(uniqueKeysWithValues: fetched.map { ($0.id, $0.legacy) }) == Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0.legacy) }))
        #expect(Dictionary(uniqueKeysWithValues: fetched.map { ($0.id, $0.name) }) == Dictionary(uniqueKeysWithValues: items.map { ($0.id, $0.name) }))
        var changes = ChangeSet()
        changes.insert(ItemOptionalName(id: "nameless", name: nil, legacy: nil, note: nil))
        try await store.submit(changes).committed()
        #expect(try await store.fetch(ItemOptionalName.self, id: "nameless")?.name == nil)
        // The change log still follows the table: writes from outside after the rebuild are logged.
        let token = try await store.currentChangeToken()
        try await store.write { db in try db.execute("UPDATE evo_items SET note = 'outside' WHERE id = 'i1'") }
        #expect(try await store.changes(since: token).changes.map(\.key) == [.text("i1")])
        let indexes = try await store.read { db in try db.indexes(on: "evo_items") }
        #expect(indexes.contains("evo_items_name"))
    }

    @Test func anEntityNoLongerDeclaredKeepsItsTableAndFullTextFollowsTheDeclaration() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("retired.sqlite")
        do {
            let store = try await openStore(path, entities: [NoteV1.self, Retired.self])
            var changes = ChangeSet()
            notes.forEach { changes.insert($0) }
            changes.insert(Retired(id: "r", value: 7))
            try await store.submit(changes).committed()
            try await store.close()
        }
        // Without Retired and without the full-text index: the table stays, the FTS5 table goes.
        do {
            let store = try await openStore(path, entities: [NoteWithoutSearch.self])
            #expect(store.appliedMigrations.contains("drop full-text index evo_notes_fts"))
            let tables = try await store.read { db in (try db.tableExists("evo_retired"), try db.tableExists("evo_notes_fts")) }
            #expect(tables == (true, false))
            #expect(try await store.fetch(Query<NoteWithoutSearch>()).map(\.title) == notes.map(\.title))
            try await store.close()
        }
        // Both back: the retired entity's values were never touched, the index is rebuilt from the rows.
        let store = try await openStore(path, entities: [NoteV1.self, Retired.self])
        #expect(try await store.fetch(Query<Retired>()) == [Retired(id: "r", value: 7)])
        #expect(try await store.fetch(Query<NoteV1>(where: .matches("linux"))).map(\.id) == [2])
    }

    @Test func theDevelopmentOptionErasesAnIncompatibleStoreLoudly() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("erase.sqlite")
        try await write(notes, to: path)
        // Off by default: refused, nothing erased.
        await expectRefused(NoteDoneText.self, at: path, attribute: "done", mentions: ["declared as text"])
        let log = LogRecorder()
        let store = try await openStore(path, entities: [NoteDoneText.self]) {
            $0.logger = log.logger
            $0.erasesDatabaseOnIncompatibleSchema = true
        }
        #expect(store.wasCreated)
        #expect(try await store.count(Query<NoteDoneText>()) == 0)
        let erased = log.records.first { $0.level == .error && $0.message.contains("erasing the store") }
        #expect(erased?.metadata.contains("incompatibleSchema") == true, "\(log.records)")
        // A compatible store is never erased by the option.
        var changes = ChangeSet()
        changes.insert(NoteDoneText(id: 9, title: "kept", done: "yes"))
        try await store.submit(changes).committed()
        try await store.close()
        let reopened = try await openStore(path, entities: [NoteDoneText.self]) { $0.erasesDatabaseOnIncompatibleSchema = true }
        #expect(try await reopened.fetch(Query<NoteDoneText>()).map(\.id) == [9])
    }

    @MainActor
    @Test func aSnapshotOfTheSchemaBeforeARenameIsNeverUsed() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("warm.sqlite"), snapshot = directory.path("warm.snapshot")
        do {
            let store = try await openStore(path, entities: [NoteV1.self])
            var changes = ChangeSet()
            notes.forEach { changes.insert($0) }
            try await store.submit(changes).committed()
            let main = store.mainContext
            _ = try await main.fetch(Query<NoteV1>())
            _ = try await main.writeSnapshot(to: snapshot)
            try await store.close()
        }
        let warm = try await Store.openWarm(at: path, snapshot: snapshot, entities: [NoteRenamed.self])
        #expect(warm.outcome.rejection == .schemaChanged)
        #expect(try await warm.store.fetch(Query<NoteRenamed>()).map(\.headline) == notes.map(\.title))
        try await warm.store.close()
    }
}
