import Foundation
import Strata

/// Version 1 of the entity the migration probe upgrades (`MigrationKillTests` declares the same).
struct MigratingNoteV1: Entity, Equatable {
    var id: Int64
    var done: Bool
    var title: String
    static let entityName = "MigratingNote"
    static let tableName = "migrating_notes"
    static let fullTextAttributes = ["title"]
}

/// Version 2: `done` becomes text (a named migration converts it, the table is rebuilt) and
/// `title` is renamed `headline`.
struct MigratingNoteV2: Entity, Equatable {
    var id: Int64
    var done: String
    var headline: String
    static let entityName = "MigratingNote"
    static let tableName = "migrating_notes"
    static let fullTextAttributes = ["headline"]
    static let formerAttributeNames = ["headline": "title"]
}

/// The named migration version 2 needs. With `killInside`, the process kills itself in the
/// middle of it, after it has rewritten every row: the opening transaction never commits.
func migratingNoteMigration(killInside: Bool) -> Migration {
    Migration("done as words") { db in
        try db.execute("UPDATE migrating_notes SET done = CASE done WHEN 1 THEN 'yes' ELSE 'no' END")
        if killInside {
            probeEmit("inside the migration, every row rewritten")
            kill(getpid(), SIGKILL)
        }
    }
}

/// `migration-kill <db>`: opens the version-1 file with version 2 and dies inside the migration.
func runMigrationKill(arguments: [String]) async -> Int32 {
    guard arguments.count == 1 else { return 2 }
    do {
        _ = try await Store.open(at: arguments[0], entities: [MigratingNoteV2.self],
                                 migrations: [migratingNoteMigration(killInside: true)])
        probeEmit("the migration finished, which it must not")
        return 1
    } catch {
        probeEmit("error \(error)")
        return 1
    }
}
