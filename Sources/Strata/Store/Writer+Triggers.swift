import Foundation

/// How the writer keeps the change-log triggers from logging its own change sets, which it logs
/// itself (one entry per run of same-kind operations, `ChangeLog.Batch`).
enum OwnChangesMode: Equatable {
    /// Triggers are switched off on the writer's connection (`SQLITE_DBCONFIG_ENABLE_TRIGGER`):
    /// no trigger program runs for Strata's own rows. Other connections are not affected.
    case triggersDisabled
    /// A table the change sets write carries a trigger that must still fire (a full-text index's,
    /// the app's own, or one a foreign-key action reaches): triggers stay on, and each change set
    /// deletes the entries the log triggers made before logging itself.
    case triggerEntriesRemoved
}

extension Writer {
    /// Runs `body`, which applies `changes` (``apply(_:)``), so that the change-log triggers log
    /// none of their rows, and leaves triggers on afterwards, whether `body` returns or throws:
    /// user SQL (`Store.write`, migrations) always runs with every trigger on. Call inside the
    /// transaction that applies the change sets, so the trigger check and the writes see one schema.
    ///
    /// Switching triggers off or on expires the connection's prepared statements (SQLite compiles
    /// triggers into them): the statements a drain uses are prepared again once per drain.
    func applyingOwnChanges<T>(_ changes: [ChangeSet], _ body: () throws -> T) throws -> T {
        let mode: OwnChangesMode = try firesOtherTriggers(changes) ? .triggerEntriesRemoved : .triggersDisabled
        if mode == .triggersDisabled { try connection.setTriggersEnabled(false) }
        ownChangesMode = mode
        let result = Result { try body() }
        ownChangesMode = nil
        if mode == .triggersDisabled { try connection.setTriggersEnabled(true) }
        return try result.get()
    }

    /// Whether applying `changes` writes a table that carries a trigger other than the change
    /// log's (directly, or through a foreign-key action), so that triggers must stay on.
    private func firesOtherTriggers(_ changes: [ChangeSet]) throws -> Bool {
        let version = Int64.fromDatabaseValue(try connection.rows("PRAGMA schema_version").first?.first ?? .null) ?? 0
        let tables: Set<String>
        if let known = otherTriggerTables, known.schemaVersion == version {
            tables = known.tables
        } else {
            tables = try Self.tablesFiringOtherTriggers(connection)
            otherTriggerTables = (version, tables)
        }
        if tables.isEmpty { return false }
        var last: EntityStatements?
        for changeSet in changes {
            for operation in changeSet.operations {
                // An unknown entity fails its change set in `apply`, not the whole drain here.
                guard let entity = try? statements(for: operation), entity !== last else { continue }
                last = entity
                if tables.contains(entity.schema.table.lowercased()) { return true }
            }
        }
        return false
    }

    /// The tables (lowercased, as SQLite compares names) whose writes fire a trigger other than
    /// the change log's: those that carry one, and every parent whose foreign-key action
    /// (`CASCADE`, `SET NULL`, `SET DEFAULT`) writes such a table, transitively. Foreign-key
    /// actions still run with triggers off; the triggers of the rows they change would not.
    static func tablesFiringOtherTriggers(_ connection: Connection) throws -> Set<String> {
        var tables: Set<String> = []
        for row in try connection.rows("SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'", cached: false) {
            guard let name = String.fromDatabaseValue(row[0]), let table = String.fromDatabaseValue(row[1]) else { continue }
            if !ChangeLog.isLogTrigger(name, on: table) { tables.insert(table.lowercased()) }
        }
        guard !tables.isEmpty else { return tables }
        let actions = try connection.rows("""
            SELECT m.name, f."table" FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f
            WHERE m.type = 'table' AND (f.on_delete NOT IN ('NO ACTION', 'RESTRICT') OR f.on_update NOT IN ('NO ACTION', 'RESTRICT'))
            """, cached: false).compactMap { row -> (child: String, parent: String)? in
            guard let child = String.fromDatabaseValue(row[0]), let parent = String.fromDatabaseValue(row[1]) else { return nil }
            return (child.lowercased(), parent.lowercased())
        }
        var grew = true
        while grew {
            grew = false
            for action in actions where tables.contains(action.child) && !tables.contains(action.parent) {
                tables.insert(action.parent)
                grew = true
            }
        }
        return tables
    }
}
