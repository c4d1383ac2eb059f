import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Must match `MigratingNoteV1` / `MigratingNoteV2` in Sources/StrataProbe/MigrationProbe.swift.
private struct MigratingNoteV1: Entity, Equatable {
    var id: Int64
    var done: Bool
    var title: String
    static let entityName = "MigratingNote"
    static let tableName = "migrating_notes"
    static let fullTextAttributes = ["title"]
}

private struct MigratingNoteV2: Entity, Equatable {
    var id: Int64
    var done: String
    var headline: String
    static let entityName = "MigratingNote"
    static let tableName = "migrating_notes"
    static let fullTextAttributes = ["headline"]
    static let formerAttributeNames = ["headline": "title"]
}

/// A process killed in the middle of a migration — its named migration has rewritten every row,
/// the automatic steps (a column rename, a table rebuild) are still to come — leaves the old
/// schema and every old value: the opening transaction never committed.
@Suite struct MigrationKillTests {
    @Test(.hangWatchdog) func killedInsideAMigrationLeavesTheOldSchemaAndData() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("migrating.sqlite")
        let notes = (0..<200).map { MigratingNoteV1(id: Int64($0), done: $0 % 3 == 0, title: "note \($0) about swift") }
        let schemaBefore: [[DatabaseValue]]
        do {
            let store = try await Store.open(at: path, entities: [MigratingNoteV1.self])
            var changes = ChangeSet()
            notes.forEach { changes.insert($0) }
            try await store.submit(changes).committed()
            schemaBefore = try await store.read { db in
                try db.rows("SELECT type, name, sql FROM sqlite_master ORDER BY name").map(\.values)
            }
            try await store.close()
        }

        let run = try ProbeRun(["migration-kill", path])
        _ = await run.exited()
        #expect(run.allLines.contains("inside the migration, every row rewritten"), "\(run.allLines)")
        #expect(!run.allLines.contains { $0.hasPrefix("the migration finished") })

        // The old version opens the file as it was: schema, values, full-text index, no record of the migration.
        do {
            let store = try await Store.open(at: path, entities: [MigratingNoteV1.self])
            #expect(store.appliedMigrations.isEmpty)
            #expect(try await store.read { db in
                try db.rows("SELECT type, name, sql FROM sqlite_master ORDER BY name").map(\.values)
            } == schemaBefore)
            #expect(try await store.fetch(Query<MigratingNoteV1>()) == notes)
            #expect(try await store.count(Query<MigratingNoteV1>(where: .matches("swift"))) == notes.count)
            let recorded = try await store.read { db in
                try db.rows("SELECT name FROM strata_migrations WHERE kind = 'migration'").count
            }
            #expect(recorded == 0)
            #expect(try await store.integrityProblems().isEmpty)
            try await store.close()
        }

        // And the upgrade, run to the end, carries every value over.
        let upgraded = try await Store.open(at: path, entities: [MigratingNoteV2.self], migrations: [
            Migration("done as words") { db in
                try db.execute("UPDATE migrating_notes SET done = CASE done WHEN 1 THEN 'yes' ELSE 'no' END")
            },
        ])
        #expect(upgraded.appliedMigrations.contains("done as words"))
        #expect(try await upgraded.fetch(Query<MigratingNoteV2>())
                == notes.map { MigratingNoteV2(id: $0.id, done: $0.done ? "yes" : "no", headline: $0.title) })
        #expect(try await upgraded.count(Query<MigratingNoteV2>(where: .matches("swift"))) == notes.count)
    }
}
