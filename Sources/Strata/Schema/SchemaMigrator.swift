import Foundation
import Logging

/// Brings a database file to the schema the app declares, in one transaction at open:
/// refuse newer files, run pending named migrations, then the automatic (lightweight) steps —
/// new tables, new columns with their defaults, new indexes, full-text tables — and record it all.
struct SchemaMigrator {
    static let metaTable = "strata_meta"
    static let migrationsTable = "strata_migrations"
    static let entitiesTable = "strata_entities"

    let schemas: [EntitySchema]
    let migrations: [Migration]
    let schemaVersion: Int
    let logger: Logger

    /// What the migrator learned about the file.
    struct Outcome {
        var storeID: UUID
        var isNew: Bool
        var applied: [String]
    }

    func migrate(_ connection: Connection) throws -> Outcome {
        try Database.scoped(connection) { database in
            try connection.inTransaction(.immediate) {
                let isNew = try !database.tableExists(Self.metaTable)
                    && schemas.allSatisfy { try !database.tableExists($0.table) }
                try createBookkeeping(connection)
                try refuseNewerSchema(database, connection)
                var applied: [String] = []
                try runNamedMigrations(database, connection, isNew: isNew, applied: &applied)
                // Every existing table is diffed before any is changed: a refusal throws, and the
                // transaction leaves the file as it was.
                var plans: [String: EntityPlan] = [:]
                for schema in schemas where try database.tableExists(schema.table) {
                    plans[schema.name] = try plan(schema, stored: try storedSchema(schema.name, connection), database,
                                                  connection, migrated: !applied.isEmpty)
                }
                if plans.values.contains(where: { !$0.dropped.isEmpty }) { try loosenUpdateTriggers(database, connection) }
                for schema in schemas {
                    try migrateEntity(schema, plan: plans[schema.name], database, connection, applied: &applied)
                }
                let declared = Set(schemas.map(\.name))
                for row in try connection.rows("SELECT name, table_name FROM \(Self.entitiesTable) ORDER BY name")
                where !declared.contains(String.fromDatabaseValue(row[0]) ?? "") {
                    // Its rows stay: a later version may declare it again, or a migration move them.
                    logger.debug("entity no longer declared; its table is kept",
                                 metadata: ["entity": "\(row[0])", "table": "\(row[1])"])
                }
                let storeID = try recordMeta(connection)
                // What the migrations wrote, as one transaction of the history.
                try ChangeLog.closeOutside(at: Date().timeIntervalSince1970, connection)
                return Outcome(storeID: storeID, isNew: isNew, applied: applied)
            }
        }
    }

    /// Refuses a file that holds another application's database: schema objects but none of
    /// Strata's bookkeeping. Runs before anything is written (see ``Connection/init(path:options:inspect:)``),
    /// so such a file is left exactly as it was. An empty database (a new or zero-length file)
    /// passes: it becomes a new store.
    static func refuseForeignDatabase(_ connection: Connection) throws {
        let isStrata = try !connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                            [.text(metaTable)], cached: false).isEmpty
        guard !isStrata else { return }
        let objects = try connection.rows("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                                          + "ORDER BY name LIMIT 4", cached: false)
            .compactMap { row in String.fromDatabaseValue(row[0]).flatMap { type in String.fromDatabaseValue(row[1]).map { "\(type) \($0)" } } }
        guard !objects.isEmpty else { return }
        throw StrataError(.notADatabase, "an SQLite database but not a Strata store: it has "
                          + objects.prefix(3).joined(separator: ", ") + (objects.count > 3 ? ", …" : "")
                          + " and no \(metaTable) table; Strata opens only its own stores (or an empty file, "
                          + "which becomes one) and left this file untouched", path: connection.path)
    }

    private func createBookkeeping(_ connection: Connection) throws {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS \(Self.metaTable) (key TEXT NOT NULL PRIMARY KEY, value);
            CREATE TABLE IF NOT EXISTS \(Self.migrationsTable) (
                name TEXT NOT NULL PRIMARY KEY, kind TEXT NOT NULL, applied_at REAL NOT NULL);
            CREATE TABLE IF NOT EXISTS \(Self.entitiesTable) (
                name TEXT NOT NULL PRIMARY KEY, table_name TEXT NOT NULL, schema TEXT NOT NULL);
            """ + ChangeLog.createSQL)
        try ChangeLog.migrateFormat(connection, at: Date().timeIntervalSince1970)
    }

    private func refuseNewerSchema(_ database: Database, _ connection: Connection) throws {
        let recorded = try database.schemaVersion()
        if recorded > schemaVersion {
            throw StrataError(.newerSchema, "the database has schema version \(recorded), newer than this app's "
                              + "\(schemaVersion); refusing to open it", path: connection.path)
        }
        let known = Set(migrations.map(\.name))
        let unknown = try connection.rows("SELECT name FROM \(Self.migrationsTable) WHERE kind = 'migration' ORDER BY applied_at")
            .compactMap { String.fromDatabaseValue($0[0]) }.filter { !known.contains($0) }
        if let first = unknown.first {
            throw StrataError(.newerSchema, "the database has migration '\(first)' that this app does not know; "
                              + "it was written by a newer version", path: connection.path)
        }
    }

    private func runNamedMigrations(_ database: Database, _ connection: Connection, isNew: Bool,
                                    applied: inout [String]) throws {
        let done = Set(try connection.rows("SELECT name FROM \(Self.migrationsTable)").compactMap { String.fromDatabaseValue($0[0]) })
        if !isNew, migrations.contains(where: { !done.contains($0.name) }) { try loosenUpdateTriggers(database, connection) }
        for migration in migrations where !done.contains(migration.name) {
            if !isNew {
                do {
                    try connection.inSavepoint { try migration.body(database) }
                } catch {
                    var failure = StrataError(.migrationFailed, "migration '\(migration.name)' failed: \(error)",
                                              path: connection.path)
                    failure.sql = (error as? StrataError)?.sql
                    throw failure
                }
                logger.debug("ran migration", metadata: ["migration": "\(migration.name)"])
                applied.append(migration.name)
            }
            try record(migration.name, kind: "migration", connection)
        }
    }

    /// Before SQL that may drop a column — a named migration, an automatic drop — the log's
    /// update triggers name no column but the key, or SQLite would refuse the drop; each
    /// entity's migration installs the full ones again (``migrateEntity``).
    private func loosenUpdateTriggers(_ database: Database, _ connection: Connection) throws {
        for schema in schemas where try database.tableExists(schema.table) {
            guard let code = Int64.fromDatabaseValue(try connection.rows("SELECT rowid FROM \(Self.entitiesTable) WHERE name = ?",
                                                                         [.text(schema.name)]).first?.first ?? .null) else { continue }
            try ChangeLog.installTriggers(schema, code: code, connection, comparingAttributes: false)
        }
    }

    private func record(_ name: String, kind: String, _ connection: Connection) throws {
        try connection.execute("INSERT OR IGNORE INTO \(Self.migrationsTable) (name, kind, applied_at) VALUES (?, ?, ?)",
                               [.text(name), .text(kind), .real(Date().timeIntervalSince1970)])
    }

    private func migrateEntity(_ schema: EntitySchema, plan: EntityPlan?, _ database: Database, _ connection: Connection,
                               applied: inout [String]) throws {
        func automatic(_ name: String, _ sql: String) throws {
            try connection.execute(sql)
            try record(name, kind: "automatic", connection)
            applied.append(name)
            logger.debug("automatic migration", metadata: ["step": "\(name)"])
        }
        if let plan {
            try execute(plan, schema, connection, automatic: automatic)
        } else {
            try automatic("create table \(schema.table)", Self.createTableSQL(schema))
        }
        try migrateIndexes(schema, stored: try storedSchema(schema.name, connection), database, automatic: automatic)
        // Renamed or rebuilt columns: the full-text table reads its content by column name, and
        // a rebuild took its triggers with the old table.
        try migrateFullText(schema, database, connection, rebuild: plan.map { $0.rebuild || !$0.renames.isEmpty } ?? false,
                            automatic: automatic)
        if let plan { try dropColumns(plan, schema, automatic: automatic) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys   // deterministic: an unchanged schema writes nothing
        let json = String(decoding: try encoder.encode(schema), as: UTF8.self)
        try connection.execute("INSERT INTO \(Self.entitiesTable) (name, table_name, schema) VALUES (?, ?, ?) "
                               + "ON CONFLICT(name) DO UPDATE SET table_name = excluded.table_name, schema = excluded.schema "
                               + "WHERE table_name IS NOT excluded.table_name OR schema IS NOT excluded.schema",
                               [.text(schema.name), .text(schema.table), .text(json)])
        let code = Int64.fromDatabaseValue(try connection.rows("SELECT rowid FROM \(Self.entitiesTable) WHERE name = ?",
                                                               [.text(schema.name)]).first?.first ?? .null) ?? 0
        try ChangeLog.installTriggers(schema, code: code, connection)
    }

    /// The schema the store recorded for an entity, if any.
    private func storedSchema(_ name: String, _ connection: Connection) throws -> EntitySchema? {
        try connection.rows("SELECT schema FROM \(Self.entitiesTable) WHERE name = ?", [.text(name)])
            .first.flatMap { String.fromDatabaseValue($0[0]) }
            .flatMap { try? JSONDecoder().decode(EntitySchema.self, from: Data($0.utf8)) }
    }

    /// Indexes follow the declaration: a declared one missing from the file is created; one the
    /// store created for an earlier declaration and no longer declared is dropped; one whose
    /// definition changed (attributes, uniqueness) is rebuilt. Indexes the app made itself (in
    /// a migration) were never declared, so they are left alone. Indexes hold no data: every
    /// step is lossless.
    private func migrateIndexes(_ schema: EntitySchema, stored: EntitySchema?, _ database: Database,
                                automatic: (String, String) throws -> Void) throws {
        let existing = Set(try database.indexes(on: schema.table))
        let declared = Dictionary(schema.indexes.map { (schema.indexName($0), $0) }, uniquingKeysWith: { first, _ in first })
        for index in stored?.indexes ?? [] {
            let name = stored!.indexName(index)
            guard existing.contains(name) else { continue }
            if let now = declared[name], now.attributes == index.attributes, now.isUnique == index.isUnique { continue }
            try automatic("drop index \(name)", "DROP INDEX \(name.quotedIdentifier)")
        }
        let remaining = Set(try database.indexes(on: schema.table))
        for (name, index) in declared.sorted(by: { $0.key < $1.key }) where !remaining.contains(name) {
            let columns = try index.attributes.map { schema.attributes[try schema.requirePosition(of: $0)].column.quotedIdentifier }
            try automatic("create index \(name)",
                          "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(name.quotedIdentifier) "
                          + "ON \(schema.table.quotedIdentifier) (\(columns.joined(separator: ", ")))")
        }
    }

    private func migrateFullText(_ schema: EntitySchema, _ database: Database, _ connection: Connection, rebuild: Bool,
                                 automatic: (String, String) throws -> Void) throws {
        let stored = try storedSchema(schema.name, connection)
        let exists = try database.tableExists(schema.fullTextTable)
        if exists, !rebuild, stored?.fullTextAttributes == schema.fullTextAttributes { return }
        if exists {
            try automatic("drop full-text index \(schema.fullTextTable)", Self.dropFullTextSQL(schema))
        }
        if !schema.fullTextAttributes.isEmpty {
            try automatic("create full-text index \(schema.fullTextTable) (\(schema.fullTextAttributes.joined(separator: ", ")))",
                          Self.createFullTextSQL(schema))
        }
    }

    // MARK: SQL

    static func columnDefinition(_ attribute: AttributeSchema) -> String {
        var sql = "\(attribute.column.quotedIdentifier) \(attribute.type.sqlType)"
        if !attribute.isOptional { sql += " NOT NULL DEFAULT \(attribute.defaultValue.description)" }
        return sql
    }

    static func createTableSQL(_ schema: EntitySchema) -> String {
        let columns = schema.attributes.enumerated().map { index, attribute in
            index == schema.primaryKeyIndex
                ? "\(attribute.column.quotedIdentifier) \(attribute.type.sqlType) NOT NULL PRIMARY KEY"
                : columnDefinition(attribute)
        }
        return "CREATE TABLE \(schema.table.quotedIdentifier) (\(columns.joined(separator: ", ")))"
    }

    static func createFullTextSQL(_ schema: EntitySchema) -> String {
        let fts = schema.fullTextTable.quotedIdentifier
        let columns = schema.fullTextAttributes.map { name in
            schema.attributes[schema.position(of: name)!].column.quotedIdentifier
        }
        let list = columns.joined(separator: ", ")
        let new = columns.map { "new." + $0 }.joined(separator: ", ")
        let old = columns.map { "old." + $0 }.joined(separator: ", ")
        let table = schema.table.quotedIdentifier
        let literal = DatabaseValue.text(schema.table).description
        return """
            CREATE VIRTUAL TABLE \(fts) USING fts5(\(list), content=\(literal), content_rowid='rowid');
            CREATE TRIGGER \((schema.fullTextTable + "_insert").quotedIdentifier) AFTER INSERT ON \(table) BEGIN
                INSERT INTO \(fts)(rowid, \(list)) VALUES (new.rowid, \(new));
            END;
            CREATE TRIGGER \((schema.fullTextTable + "_delete").quotedIdentifier) AFTER DELETE ON \(table) BEGIN
                INSERT INTO \(fts)(\(fts), rowid, \(list)) VALUES ('delete', old.rowid, \(old));
            END;
            CREATE TRIGGER \((schema.fullTextTable + "_update").quotedIdentifier) AFTER UPDATE ON \(table) BEGIN
                INSERT INTO \(fts)(\(fts), rowid, \(list)) VALUES ('delete', old.rowid, \(old));
                INSERT INTO \(fts)(rowid, \(list)) VALUES (new.rowid, \(new));
            END;
            INSERT INTO \(fts)(\(fts)) VALUES ('rebuild');
            """
    }

    static func dropFullTextSQL(_ schema: EntitySchema) -> String {
        ["_insert", "_delete", "_update"].map { "DROP TRIGGER IF EXISTS \((schema.fullTextTable + $0).quotedIdentifier);" }
            .joined() + "DROP TABLE IF EXISTS \(schema.fullTextTable.quotedIdentifier);"
    }

    private func recordMeta(_ connection: Connection) throws -> UUID {
        try connection.execute("INSERT OR IGNORE INTO \(Self.metaTable) (key, value) VALUES ('store_id', ?)",
                               [.text(UUID().uuidString)])
        try connection.execute("INSERT OR IGNORE INTO \(Self.metaTable) (key, value) VALUES ('created_at', ?)",
                               [.real(Date().timeIntervalSince1970)])
        try connection.execute("INSERT INTO \(Self.metaTable) (key, value) VALUES ('schema_version', ?) "
                               + "ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)",
                               [.integer(Int64(schemaVersion))])
        let id = try connection.rows("SELECT value FROM \(Self.metaTable) WHERE key = 'store_id'").first?.first
        guard let text = id.flatMap(String.fromDatabaseValue), let uuid = UUID(uuidString: text) else {
            throw StrataError(.corrupt, "the store identity in \(Self.metaTable) is not a UUID", path: connection.path)
        }
        return uuid
    }
}
