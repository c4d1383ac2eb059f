import Foundation

/// Reads a Strata store file without the app's entity types — for tools such as the `strata`
/// CLI (`inspect`, `query`, `check`, `snapshot info`).
///
/// The file is opened read-only (`SQLITE_OPEN_READONLY`): nothing the inspector does can change
/// it. Entities are described by the schemas the store recorded in `strata_entities`, so rows
/// come back untyped (``Row``) and filters are checked against the recorded attributes.
///
/// Unlike ``Store``, the inspector runs its SQL on the calling thread (it has no queue): call it
/// from a tool or a background task, never from an app's main actor.
///
/// ```swift
/// let inspector = try StoreInspector(path: "reader.sqlite")
/// let summary = try inspector.summary()
/// let article = try inspector.entity(named: "Article")
/// let unread = try inspector.rows(InspectionQuery(entity: article.name, where: Attribute("isRead") == false,
///                                                 sortedBy: [Attribute("published").descending], limit: 10))
/// let report = try inspector.check(snapshot: "reader.snapshot")
/// ```
///
/// Like any SQLite reader of a WAL-mode file, opening may create the empty `-wal` and `-shm`
/// companions when they do not exist; the database file itself is never written. In a directory
/// the process cannot write, where they cannot be created, the file is read as it is on disk
/// (``isReadAsImmutable``): see ``unreadWALBytes`` for what that leaves out.
///
/// A store whose bookkeeping this build cannot read is refused with ``StrataError/Code/newerSchema``:
/// one that records a bookkeeping `format` in `strata_meta` above ``readableFormat``, or whose
/// recorded entity schemas use attribute types or fields this build does not know. (The app's
/// `schema_version` is reported, not judged: the inspector has no app version to compare it with.)
///
/// Not `Sendable`: an inspector owns one SQLite connection; use it from one task at a time.
public final class StoreInspector {
    /// The newest bookkeeping format this build reads. Stores that record none are format 1;
    /// format 2 adds the history's transactions and consumers; format 3 stored values
    /// (`strata_values`, ``ChangeSet/setStoredValue(_:forKey:)``).
    public static let readableFormat = 3

    /// The database file.
    public let path: String
    /// The store's identity (`strata_meta` `store_id`).
    public let storeID: UUID
    /// The app schema version recorded in the file.
    public let schemaVersion: Int
    /// The bookkeeping format recorded in the file (1 when none is).
    public let format: Int
    /// When the store was created, if recorded.
    public let createdAt: Date?
    /// Every recorded entity's schema, sorted by name.
    public let entities: [EntitySchema]
    /// Whether the database file is read alone, without its `-wal`: the store's directory is not
    /// writable and SQLite could not open the file for shared reading (SQLite 3.40 needs a `-wal`
    /// and a `-shm` that exist, or that it can create), so it was opened immutable (`immutable=1`).
    public let isReadAsImmutable: Bool

    let connection: Connection
    /// The compact codes the change log uses for entities (`strata_entities` row IDs).
    let entityCodes: [Int64: String]

    /// Opens the store at `path` read-only and reads its bookkeeping.
    /// - Throws: ``StrataError`` — `.cannotOpen` (no such file, a directory, no permission),
    ///   `.notADatabase` (not SQLite, or SQLite but not a Strata store), `.corrupt`,
    ///   `.newerSchema` (bookkeeping this build cannot read).
    public init(path: String) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw StrataError(.cannotOpen, "no such file", path: path)
        }
        guard !isDirectory.boolValue else {
            throw StrataError(.cannotOpen, "is a directory, not a store file", path: path)
        }
        let (connection, isImmutable) = try Self.openReadOnly(path)
        let database = Database(connection: connection)
        for table in [SchemaMigrator.metaTable, SchemaMigrator.entitiesTable, ChangeLog.table] {
            guard try database.tableExists(table) else {
                throw StrataError(.notADatabase, "an SQLite database but not a Strata store (it has no \(table) table)",
                                  path: path)
            }
        }
        let meta = try Self.meta(connection)
        let format = Int.fromDatabaseValue(meta["format"] ?? .null) ?? 1
        guard format <= Self.readableFormat else {
            throw StrataError(.newerSchema, "the store's bookkeeping format is \(format); this version of Strata reads "
                              + "format \(Self.readableFormat) and older", path: path)
        }
        guard let idText = meta["store_id"].flatMap(String.fromDatabaseValue), let storeID = UUID(uuidString: idText) else {
            throw StrataError(.corrupt, "the store identity in \(SchemaMigrator.metaTable) is missing or not a UUID", path: path)
        }
        var schemas: [EntitySchema] = []
        var codes: [Int64: String] = [:]
        for row in try connection.rows("SELECT rowid, name, schema FROM \(SchemaMigrator.entitiesTable) ORDER BY name") {
            guard let code = Int64.fromDatabaseValue(row[0]), let name = String.fromDatabaseValue(row[1]),
                  let json = String.fromDatabaseValue(row[2]) else {
                throw StrataError(.corrupt, "\(SchemaMigrator.entitiesTable) holds a malformed row", path: path)
            }
            schemas.append(try StoredSchema.decode(json, entity: name, path: path))
            codes[code] = name
        }
        self.path = path
        self.connection = connection
        self.isReadAsImmutable = isImmutable
        self.storeID = storeID
        self.format = format
        self.schemaVersion = Int.fromDatabaseValue(meta["schema_version"] ?? .null) ?? 0
        self.createdAt = Double.fromDatabaseValue(meta["created_at"] ?? .null).map(Date.init(timeIntervalSince1970:))
        self.entities = schemas
        self.entityCodes = codes
    }

    private static func meta(_ connection: Connection) throws -> [String: DatabaseValue] {
        var meta: [String: DatabaseValue] = [:]
        for row in try connection.rows("SELECT key, value FROM \(SchemaMigrator.metaTable)") {
            if let key = String.fromDatabaseValue(row[0]) { meta[key] = row[1] }
        }
        return meta
    }

    /// The recorded entity named `name` — its entity name or its table name, ignoring case.
    /// - Throws: `.unknownEntity`, listing the entities the store has.
    public func entity(named name: String) throws -> EntitySchema {
        if let exact = entities.first(where: { $0.name == name }) { return exact }
        let folded = name.lowercased()
        if let match = entities.first(where: { $0.name.lowercased() == folded || $0.table.lowercased() == folded }) {
            return match
        }
        throw StrataError(.unknownEntity, "the store has no entity '\(name)' (it has: "
                          + entities.map(\.name).joined(separator: ", ") + ")", path: path, entity: name)
    }

    /// The number of rows in the entity's table, or nil when the table is missing.
    public func rowCount(of entity: EntitySchema) throws -> Int? {
        guard try Database(connection: connection).tableExists(entity.table) else { return nil }
        let value = try connection.rows("SELECT count(*) FROM \(entity.table.quotedIdentifier)", cached: false).first?.first
        return Int.fromDatabaseValue(value ?? .null) ?? 0
    }

    /// The indexes on the entity's table, sorted by name.
    public func indexes(of entity: EntitySchema) throws -> [IndexSummary] {
        try connection.rows("SELECT name, \"unique\", origin FROM pragma_index_list(?) ORDER BY name", [.text(entity.table)])
            .compactMap { row in
                guard let name = String.fromDatabaseValue(row[0]) else { return nil }
                let columns = try connection.rows("SELECT name FROM pragma_index_info(?) ORDER BY seqno", [.text(name)])
                    .map { String.fromDatabaseValue($0[0]) ?? "(expression)" }
                let origin: IndexSummary.Origin
                switch String.fromDatabaseValue(row[2]) {
                case "pk": origin = .primaryKey
                case "u": origin = .uniqueConstraint
                default: origin = .declared
                }
                return IndexSummary(name: name, table: entity.table, columns: columns,
                                    isUnique: row[1] == .integer(1), origin: origin)
            }
    }

    /// The extent of the change log and its floor.
    public func changeLog() throws -> ChangeLogRange {
        let row = try connection.rows("SELECT min(generation), max(generation), count(*) FROM \(ChangeLog.table)",
                                      cached: false).first ?? []
        return ChangeLogRange(floor: try ChangeLog.floor(connection), oldest: row.first.flatMap(Int64.fromDatabaseValue),
                              newest: row.dropFirst().first.flatMap(Int64.fromDatabaseValue),
                              entries: row.last.flatMap(Int.fromDatabaseValue) ?? 0)
    }

    /// The schema's history: every named migration and automatic step the store recorded,
    /// oldest first.
    public func migrations() throws -> [AppliedMigration] {
        try connection.rows("SELECT name, kind, applied_at FROM \(SchemaMigrator.migrationsTable) ORDER BY applied_at, rowid",
                            cached: false).compactMap { row in
            guard let name = String.fromDatabaseValue(row[0]), let kind = String.fromDatabaseValue(row[1]) else { return nil }
            return AppliedMigration(name: name, kind: AppliedMigration.Kind(rawValue: kind) ?? .automatic,
                                    appliedAt: Date(timeIntervalSince1970: Double.fromDatabaseValue(row[2]) ?? 0))
        }
    }

    /// The sizes of the database file and its WAL, and the page counts.
    public func fileSizes() throws -> StoreFileSizes {
        let pages = try connection.pageCounts()
        let pageSize = Int.fromDatabaseValue(try connection.rows("PRAGMA page_size", cached: false).first?.first ?? .null) ?? 0
        return StoreFileSizes(database: Self.fileSize(path) ?? 0, wal: Self.fileSize(path + "-wal"), pageSize: pageSize,
                              pageCount: pages.total, freePages: pages.free)
    }

    static func fileSize(_ path: String) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
    }

    /// Everything at once: identity, entities with row counts and indexes, change log, sizes.
    public func summary() throws -> StoreSummary {
        let database = Database(connection: connection)
        let entitySummaries = try entities.map { schema in
            EntitySummary(schema: schema, rowCount: try rowCount(of: schema), indexes: try indexes(of: schema),
                          fullTextTable: try database.tableExists(schema.fullTextTable) ? schema.fullTextTable : nil)
        }
        return StoreSummary(path: path, storeID: storeID, schemaVersion: schemaVersion, format: format, createdAt: createdAt,
                            entities: entitySummaries, changeLog: try changeLog(), files: try fileSizes(),
                            migrations: try migrations())
    }
}
