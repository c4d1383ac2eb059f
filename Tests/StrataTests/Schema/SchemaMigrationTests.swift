import Foundation
import Strata
import StrataTestSupport
import Testing

// MARK: Entities

/// Version 1 of a note, as an older app wrote it.
private struct MigrationNoteV1: Entity, Equatable {
    var id: Int64
    var title: String
    var body: String?

    static let entityName = "MigrationNote"
    static let tableName = "migration_notes"
}

/// Version 2 of the same entity: new non-optional attributes, each with a declared default
/// (rows exist, so one without a default would be refused), a new optional one, a new index and
/// a full-text index.
private struct MigrationNoteV2: Entity, Equatable {
    var id: Int64
    var title: String
    var body: String?
    var priority: Int
    var category: String
    var archived: Bool
    var createdAt: Date
    var label: String?

    static let entityName = "MigrationNote"
    static let tableName = "migration_notes"
    static let indexes = [EntityIndex(["priority"])]
    static let fullTextAttributes = ["title"]
    static let attributeDefaults: [String: DatabaseValue] = ["priority": .integer(3), "category": .text("it's new"),
                                                             "archived": .integer(0), "createdAt": .real(0)]
}

/// An entity that only version 2 of the app has.
private struct MigrationTag: Entity, Equatable {
    var id: String
    var name: String
    static let tableName = "migration_tags"
}

/// An entity with a renamed attribute, which only a named migration can carry over.
private struct MigrationRenameV1: Entity, Equatable {
    var id: Int64
    var pinned: Bool
    static let entityName = "MigrationRename"
    static let tableName = "migration_renames"
}

private struct MigrationRenameV2: Entity, Equatable {
    var id: Int64
    var isPinned: Bool
    static let entityName = "MigrationRename"
    static let tableName = "migration_renames"
}

/// An entity with indexes of every kind, for the fresh-schema test.
private struct MigrationIndexed: Entity, Equatable {
    var id: UUID
    var code: String
    var group: Int
    var rank: Double
    static let tableName = "migration_indexed"
    static let indexes = [EntityIndex(["code"], unique: true), EntityIndex(["group", "rank"], name: "by_group_rank")]
}

private struct MigrationTestError: Error, CustomStringConvertible {
    var description: String { "the migration gave up on purpose" }
}

// MARK: Helpers

/// A migration that appends its name to `migration_log`, so that tests can see which migrations
/// ran and in what order.
private func loggingMigration(_ name: String, extra: @escaping @Sendable (Database) throws -> Void = { _ in }) -> Migration {
    Migration(name) { db in
        try db.execute("CREATE TABLE IF NOT EXISTS migration_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL)")
        try db.execute("INSERT INTO migration_log (name) VALUES (?)", [.text(name)])
        try extra(db)
    }
}

/// The names in `migration_log`, in the order the migrations wrote them (empty when none ran).
private func migrationLog(_ store: Store) async throws -> [String] {
    try await store.read { db in
        guard try db.tableExists("migration_log") else { return [] }
        return try db.rows("SELECT name FROM migration_log ORDER BY seq").compactMap { row -> String? in
            if case .text(let name)? = row["name"] { return name }
            return nil
        }
    }
}

/// The recorded named (`kind = 'migration'`) or automatic migrations.
private func recordedMigrations(_ store: Store, kind: String) async throws -> Set<String> {
    try await store.read { db in
        Set(try db.rows("SELECT name FROM strata_migrations WHERE kind = ?", [.text(kind)]).compactMap { row -> String? in
            if case .text(let name)? = row["name"] { return name }
            return nil
        })
    }
}

/// Everything observable about the file: its schema, the notes, the recorded migrations and
/// the schema version.
private func snapshot(_ store: Store) async throws -> [String] {
    try await store.read { db in
        var lines = try db.rows("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name")
            .map { "schema \($0.values)" }
        lines += try db.rows("SELECT * FROM migration_notes ORDER BY id").map { "row \($0.columns) \($0.values)" }
        lines += try db.rows("SELECT name, kind FROM strata_migrations ORDER BY name").map { "migration \($0.values)" }
        lines.append("version \(try db.schemaVersion())")
        return lines
    }
}

/// Creates a version-1 file holding two notes.
private func createVersion1(at path: String) async throws -> [MigrationNoteV1] {
    let notes = [MigrationNoteV1(id: 1, title: "first note", body: "body one"),
                 MigrationNoteV1(id: 2, title: "second note", body: nil)]
    let store = try await openStore(path, entities: [MigrationNoteV1.self])
    var changes = ChangeSet()
    notes.forEach { changes.insert($0) }
    try await store.submit(changes).committed()
    return notes
}

private func expectError(_ error: StrataError?, _ code: StrataError.Code, path: String,
                         sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
    #expect(error?.path == path, "\(String(describing: error))", sourceLocation: sourceLocation)
}

// MARK: Tests

@Suite struct SchemaMigrationTests {
    @Test func freshFileGetsTablesColumnsIndexesAndFullTextTable() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("fresh.sqlite")
        let store = try await openStore(path, entities: [Article.self, Feed.self, MigrationIndexed.self])
        #expect(store.wasCreated)
        let freshSteps: Set = [
            "create table articles", "create index articles_feedID_isRead",
            "create full-text index articles_fts (title, summary)", "create table Feed", "create table migration_indexed",
            "create index migration_indexed_code", "create index by_group_rank",
        ]
        #expect(Set(store.appliedMigrations).isSuperset(of: freshSteps), "\(store.appliedMigrations)")

        struct Layout: Sendable {
            var tables: [String]
            var articleColumns: [ColumnInfo]
            var feedColumns: [ColumnInfo]
            var articleIndexes: [String]
            var indexedIndexes: [Row]
            var triggers: [String]
            var bookkeeping: [Bool]
            var version: Int
            var caseInsensitiveColumn: Bool
            var attributeNameIsNotAColumn: Bool
        }
        let layout = try await store.read { db in
            Layout(
                tables: try db.tables(),
                articleColumns: try db.columns(in: "articles"),
                feedColumns: try db.columns(in: "Feed"),
                articleIndexes: try db.indexes(on: "articles"),
                indexedIndexes: try db.rows("SELECT name, \"unique\" FROM pragma_index_list('migration_indexed') ORDER BY name"),
                triggers: try db.rows("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
                    .compactMap { if case .text(let name)? = $0["name"] { return name } else { return nil } },
                bookkeeping: try ["strata_meta", "strata_migrations", "strata_entities"].map(db.tableExists),
                version: try db.schemaVersion(),
                caseInsensitiveColumn: try db.columnExists("UNIQUEid", in: "articles"),
                attributeNameIsNotAColumn: try !db.columnExists("id", in: "articles"))
        }
        for table in ["articles", "articles_fts", "Feed", "migration_indexed"] {
            #expect(layout.tables.contains(table), "\(table) missing from \(layout.tables)")
        }
        #expect(!layout.tables.contains { $0.hasPrefix("strata_") || $0.hasPrefix("sqlite_") })
        #expect(layout.tables == layout.tables.sorted())
        #expect(layout.bookkeeping == [true, true, true])

        // Columns: names (with columnNames applied), SQL types, NOT NULL for non-optionals, key.
        #expect(layout.articleColumns.map(\.name)
                == ["uniqueID", "feedID", "title", "summary", "url", "published", "isRead", "isStarred"])
        #expect(layout.articleColumns.map(\.type) == ["TEXT", "INTEGER", "TEXT", "TEXT", "TEXT", "REAL", "INTEGER", "INTEGER"])
        #expect(layout.articleColumns.map(\.isNotNull) == [true, true, true, false, true, true, true, true])
        #expect(layout.articleColumns.map(\.isPrimaryKey) == [true, false, false, false, false, false, false, false])
        #expect(layout.feedColumns.map(\.name) == ["id", "name"])
        #expect(layout.feedColumns.first?.type == "INTEGER")
        #expect(layout.feedColumns.first?.isPrimaryKey == true)
        #expect(layout.caseInsensitiveColumn)
        #expect(layout.attributeNameIsNotAColumn)

        // Indexes, with their uniqueness and names (derived or declared).
        #expect(layout.articleIndexes.contains("articles_feedID_isRead"))
        let indexed = Dictionary(uniqueKeysWithValues: layout.indexedIndexes.compactMap { row -> (String, DatabaseValue)? in
            guard case .text(let name)? = row["name"], let unique = row["unique"] else { return nil }
            return (name, unique)
        })
        #expect(indexed["migration_indexed_code"] == .integer(1))
        #expect(indexed["by_group_rank"] == .integer(0))

        // The full-text table is kept in sync by three triggers.
        #expect(layout.triggers.filter { $0.hasPrefix("articles_fts") }
                == ["articles_fts_delete", "articles_fts_insert", "articles_fts_update"])
        #expect(layout.version == 1)

        // A unique index is enforced.
        var changes = ChangeSet()
        changes.insert(MigrationIndexed(id: UUID(), code: "A", group: 1, rank: 1))
        try await store.submit(changes).committed()
        var duplicate = ChangeSet()
        duplicate.insert(MigrationIndexed(id: UUID(), code: "A", group: 2, rank: 2))
        let error = await #expect(throws: StrataError.self) { try await store.submit(duplicate).committed() }
        #expect(error?.code == .constraint)

        // Reopening finds nothing to do.
        let reopened = try await openStore(path, entities: [Article.self, Feed.self, MigrationIndexed.self])
        #expect(!reopened.wasCreated)
        #expect(reopened.appliedMigrations.isEmpty)
        #expect(reopened.storeID == store.storeID)
    }

    @Test func newVersionOfAnEntityAddsColumnsIndexesAndFullTextToExistingRows() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("upgrade.sqlite")
        let old = try await createVersion1(at: path)

        let store = try await openStore(path, entities: [MigrationNoteV2.self, MigrationTag.self])
        #expect(!store.wasCreated)
        let upgradeSteps: Set = [
            "add column migration_notes.priority", "add column migration_notes.category",
            "add column migration_notes.archived", "add column migration_notes.createdAt",
            "add column migration_notes.label", "create index migration_notes_priority",
            "create full-text index migration_notes_fts (title)", "create table migration_tags",
        ]
        #expect(Set(store.appliedMigrations).isSuperset(of: upgradeSteps), "\(store.appliedMigrations)")
        // Existing columns and the existing table are left alone.
        #expect(!store.appliedMigrations.contains { $0.contains("migration_notes.title") || $0.contains("migration_notes.body") })
        #expect(!store.appliedMigrations.contains("create table migration_notes"))
        #expect(try await recordedMigrations(store, kind: "automatic").isSuperset(of: store.appliedMigrations))

        // Existing rows read back with the declared defaults, the type's zero value, or nil.
        let notes = try await store.fetch(Query<MigrationNoteV2>())
        #expect(notes == old.map {
            MigrationNoteV2(id: $0.id, title: $0.title, body: $0.body, priority: 3, category: "it's new", archived: false,
                            createdAt: Date(timeIntervalSinceReferenceDate: 0), label: nil)
        })

        let (columns, indexes, plan) = try await store.read { db in
            (try db.columns(in: "migration_notes"), try db.indexes(on: "migration_notes"),
             try db.explain("SELECT id FROM migration_notes WHERE priority = ?", [.integer(3)]))
        }
        let byName = Dictionary(uniqueKeysWithValues: columns.map { ($0.name, $0) })
        #expect(columns.map(\.name) == ["id", "title", "body", "priority", "category", "archived", "createdAt", "label"])
        #expect(byName["priority"]?.type == "INTEGER")
        #expect(byName["priority"]?.isNotNull == true)
        #expect(byName["priority"]?.defaultSQL == "3")
        #expect(byName["category"]?.defaultSQL == "'it''s new'")
        #expect(byName["label"]?.isNotNull == false)
        #expect(indexes.contains("migration_notes_priority"))
        #expect(plan.contains { $0.detail.contains("migration_notes_priority") }, "\(plan)")

        // The new full-text index covers the rows that existed before it.
        let found = try await store.fetch(Query<MigrationNoteV2>(where: .matches("SECOND")))
        #expect(found.map(\.id) == [2])

        // The upgraded table takes version-2 objects, and the new table works.
        var changes = ChangeSet()
        let new = MigrationNoteV2(id: 3, title: "third", body: nil, priority: 1, category: "c", archived: true,
                                  createdAt: Date(timeIntervalSinceReferenceDate: 12.5), label: "l")
        changes.insert(new)
        changes.insert(MigrationTag(id: "t", name: "tag"))
        try await store.submit(changes).committed()
        #expect(try await store.fetch(MigrationNoteV2.self, id: 3) == new)
        #expect(try await store.fetch(MigrationTag.self, id: "t")?.name == "tag")

        // Nothing left to do on the next open.
        let reopened = try await openStore(path, entities: [MigrationNoteV2.self, MigrationTag.self])
        #expect(reopened.appliedMigrations.isEmpty)
        #expect(try await reopened.count(Query<MigrationNoteV2>()) == 3)
    }

    @Test func namedMigrationsRunOnceInOrderBeforeAutomaticSteps() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("named.sqlite")
        _ = try await createVersion1(at: path)

        let migrations = [
            loggingMigration("m-1"),
            loggingMigration("m-2") { db in
                // Named migrations see the file as it was: the automatic step has not added
                // `priority` yet, and the schema version is still the old one.
                let sawColumn = try db.columnExists("priority", in: "migration_notes")
                try db.execute("INSERT INTO migration_log (name) VALUES (?)", [.text("m-2 saw priority: \(sawColumn)")])
                try db.execute("INSERT INTO migration_log (name) VALUES (?)", [.text("m-2 saw version \(try db.schemaVersion())")])
                try db.execute("UPDATE migration_notes SET title = upper(title)")
            },
            loggingMigration("m-3"),
        ]
        let store = try await openStore(path, entities: [MigrationNoteV2.self], migrations: migrations) {
            $0.schemaVersion = 2
        }
        #expect(Array(store.appliedMigrations.prefix(3)) == ["m-1", "m-2", "m-3"])
        #expect(store.appliedMigrations.dropFirst(3).allSatisfy { !$0.hasPrefix("m-") })
        #expect(store.appliedMigrations.contains("add column migration_notes.priority"))
        #expect(try await migrationLog(store) == ["m-1", "m-2", "m-2 saw priority: false", "m-2 saw version 1", "m-3"])
        #expect(try await recordedMigrations(store, kind: "migration") == ["m-1", "m-2", "m-3"])
        #expect(try await store.read { db in try db.schemaVersion() } == 2)
        #expect(try await store.fetch(Query<MigrationNoteV2>()).map(\.title) == ["FIRST NOTE", "SECOND NOTE"])

        // Reopening does not run them again.
        let again = try await openStore(path, entities: [MigrationNoteV2.self], migrations: migrations) {
            $0.schemaVersion = 2
        }
        #expect(again.appliedMigrations.isEmpty)
        #expect(try await migrationLog(again).count == 5)

        // A migration added later runs alone, after the others.
        let more = try await openStore(path, entities: [MigrationNoteV2.self], migrations: migrations + [loggingMigration("m-4")]) {
            $0.schemaVersion = 2
        }
        #expect(more.appliedMigrations == ["m-4"])
        #expect(try await migrationLog(more).last == "m-4")
        #expect(try await migrationLog(more).count == 6)
    }

    @Test func namedMigrationCarriesARenamedAttributeOver() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("rename.sqlite")
        do {
            let store = try await openStore(path, entities: [MigrationRenameV1.self])
            var changes = ChangeSet()
            changes.insert(MigrationRenameV1(id: 1, pinned: true))
            changes.insert(MigrationRenameV1(id: 2, pinned: false))
            try await store.submit(changes).committed()
        }
        let rename = Migration("rename-pinned") { db in
            try db.execute("ALTER TABLE migration_renames RENAME COLUMN pinned TO isPinned")
        }
        let store = try await openStore(path, entities: [MigrationRenameV2.self], migrations: [rename])
        // The column exists by the time the automatic step runs, so it adds nothing.
        #expect(store.appliedMigrations == ["rename-pinned"])
        #expect(try await store.fetch(Query<MigrationRenameV2>())
                == [MigrationRenameV2(id: 1, isPinned: true), MigrationRenameV2(id: 2, isPinned: false)])
        let columns = try await store.read { db in try db.columns(in: "migration_renames").map(\.name) }
        #expect(columns == ["id", "isPinned"])
    }

    @Test func freshFileRecordsMigrationsWithoutRunningThem() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("fresh-migrations.sqlite")
        let migrations = [loggingMigration("m-1"), loggingMigration("m-2")]
        let store = try await openStore(path, entities: [MigrationNoteV2.self], migrations: migrations)
        #expect(store.wasCreated)
        #expect(!store.appliedMigrations.contains("m-1"))
        #expect(!store.appliedMigrations.contains("m-2"))
        #expect(store.appliedMigrations.contains("create table migration_notes"))
        #expect(try await migrationLog(store).isEmpty)
        #expect(try await store.read { db in try db.tableExists("migration_log") } == false)
        #expect(try await recordedMigrations(store, kind: "migration") == ["m-1", "m-2"])

        let reopened = try await openStore(path, entities: [MigrationNoteV2.self], migrations: migrations)
        #expect(reopened.appliedMigrations.isEmpty)
        #expect(try await migrationLog(reopened).isEmpty)
    }

    @Test(arguments: ["throws", "bad SQL"])
    func failingMigrationLeavesTheFileAsItWas(_ failure: String) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("failing.sqlite")
        _ = try await createVersion1(at: path)
        let before = try await snapshot(try await openStore(path, entities: [MigrationNoteV1.self]))

        let succeeding = loggingMigration("m-ok") { db in
            try db.execute("UPDATE migration_notes SET title = 'changed'")
            try db.execute("DELETE FROM migration_notes WHERE id = 2")
        }
        let failing = loggingMigration("m-fail") { db in
            try db.execute("UPDATE migration_notes SET body = 'clobbered'")
            if failure == "throws" { throw MigrationTestError() }
            try db.execute("UPDATE no_such_table SET x = 1")
        }
        let error = await #expect(throws: StrataError.self) {
            _ = try await openStore(path, entities: [MigrationNoteV2.self], migrations: [succeeding, failing]) {
                $0.schemaVersion = 2
            }
        }
        expectError(error, .migrationFailed, path: path)
        #expect(error?.message.contains("m-fail") == true, "\(String(describing: error))")
        if failure == "throws" {
            #expect(error?.message.contains("the migration gave up on purpose") == true)
        } else {
            #expect(error?.sql == "UPDATE no_such_table SET x = 1")
        }

        // Nothing of that open was kept: not the migration that succeeded, not the one that
        // failed, not the automatic steps, not the version.
        let unchanged = try await openStore(path, entities: [MigrationNoteV1.self])
        #expect(unchanged.appliedMigrations.isEmpty)
        #expect(try await snapshot(unchanged) == before)
        #expect(try await unchanged.fetch(Query<MigrationNoteV1>()).map(\.title) == ["first note", "second note"])

        // A later open with a fixed migration succeeds and runs both.
        let fixed = loggingMigration("m-fail")
        let upgraded = try await openStore(path, entities: [MigrationNoteV2.self], migrations: [succeeding, fixed]) {
            $0.schemaVersion = 2
        }
        #expect(Array(upgraded.appliedMigrations.prefix(2)) == ["m-ok", "m-fail"])
        #expect(try await migrationLog(upgraded) == ["m-ok", "m-fail"])
        #expect(try await upgraded.fetch(Query<MigrationNoteV2>()).map(\.title) == ["changed"])
        #expect(try await upgraded.read { db in try db.schemaVersion() } == 2)
    }

    @Test func newerSchemaVersionIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("versions.sqlite")
        let created = try await openStore(path) { $0.schemaVersion = 2 }
        #expect(try await created.read { db in try db.schemaVersion() } == 2)

        let error = await #expect(throws: StrataError.self) {
            _ = try await openStore(path) { $0.schemaVersion = 1 }
        }
        expectError(error, .newerSchema, path: path)
        #expect(error?.message.contains("2") == true)

        // The same version opens; a newer one upgrades the recorded version, which then refuses 2.
        let same = try await openStore(path) { $0.schemaVersion = 2 }
        #expect(try await same.read { db in try db.schemaVersion() } == 2)
        let newer = try await openStore(path) { $0.schemaVersion = 3 }
        #expect(try await newer.read { db in try db.schemaVersion() } == 3)
        let refused = await #expect(throws: StrataError.self) {
            _ = try await openStore(path) { $0.schemaVersion = 2 }
        }
        expectError(refused, .newerSchema, path: path)
        // The refused open did not lower the version.
        #expect(try await newer.read { db in try db.schemaVersion() } == 3)
    }

    @Test func unknownAppliedMigrationIsRefusedAsNewer() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("unknown-migration.sqlite")
        _ = try await openStore(path, migrations: [loggingMigration("a"), loggingMigration("b")])

        for known in [["a"], [], ["b"], ["a", "c"]] {
            let error = await #expect(throws: StrataError.self, "knowing \(known)") {
                _ = try await openStore(path, migrations: known.map { loggingMigration($0) })
            }
            expectError(error, .newerSchema, path: path)
            // The error names one of the applied migrations this app does not know.
            let missing = ["a", "b"].filter { !known.contains($0) }
            #expect(missing.contains { error?.message.contains("'\($0)'") == true }, "\(String(describing: error))")
        }

        // Knowing every applied migration (and a new one) opens, and runs only the new one.
        let store = try await openStore(path, migrations: [loggingMigration("a"), loggingMigration("b"), loggingMigration("c")])
        #expect(store.appliedMigrations == ["c"])
        #expect(try await migrationLog(store) == ["c"])
    }

    @Test func schemaVersionIsOneByDefaultAndSurvivesReopening() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("version-default.sqlite")
        let store = try await openStore(path)
        #expect(try await store.read { db in try db.schemaVersion() } == StoreConfiguration().schemaVersion)
        #expect(StoreConfiguration().schemaVersion == 1)
        let bumped = try await openStore(path) { $0.schemaVersion = 7 }
        #expect(try await bumped.read { db in try db.schemaVersion() } == 7)
        #expect(try await store.read { db in try db.schemaVersion() } == 7)  // the same file, seen from the first store
    }
}
