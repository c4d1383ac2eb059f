import Foundation

/// A row returned by raw SQL: column names and values.
public struct Row: Sendable, Hashable {
    /// The column names, in the statement's order.
    public let columns: [String]
    /// The values, in the order of ``columns``.
    public let values: [DatabaseValue]

    /// The value of the named column (case-insensitive), or nil when there is no such column.
    public subscript(column: String) -> DatabaseValue? {
        columns.firstIndex { $0.caseInsensitiveCompare(column) == .orderedSame }.map { values[$0] }
    }
}

/// A column of a table, as `PRAGMA table_info` reports it.
public struct ColumnInfo: Sendable, Hashable {
    /// The column's name.
    public let name: String
    /// The declared type (`INTEGER`, `TEXT` …), as written in `CREATE TABLE`.
    public let type: String
    /// Whether the column is `NOT NULL`.
    public let isNotNull: Bool
    /// The default value as SQL text, or nil when the column has none.
    public let defaultSQL: String?
    /// Whether the column is part of the primary key.
    public let isPrimaryKey: Bool
}

/// Direct access to the store's SQLite connection, for migrations and for SQL the entity API
/// does not cover. Only valid inside the closure that receives it (``Migration`` bodies,
/// ``Store/read(_:)``, ``Store/write(_:)``), which runs on the store's queue.
///
/// Two misuses fail with ``StrataError/Code/misuse`` instead of corrupting the store's state:
/// using the value after its closure returned, and transaction control in SQL (`BEGIN`,
/// `COMMIT`, `ROLLBACK`, `SAVEPOINT`, `RELEASE`), since the store owns the transaction — nest
/// with ``inSavepoint(_:)`` instead.
public final class Database {
    let connection: Connection
    private var isOpen = true

    init(connection: Connection) { self.connection = connection }

    /// Runs `body` with a `Database` on `connection` that stops working when `body` returns.
    static func scoped<T>(_ connection: Connection, _ body: (Database) throws -> T) rethrows -> T {
        let database = Database(connection: connection)
        defer { database.isOpen = false }
        return try body(database)
    }

    /// Throws unless this value is used inside the closure that received it.
    private func checkOpen() throws {
        guard isOpen else {
            throw StrataError(.misuse, "a Database was used after the closure that received it returned; "
                              + "do all database work inside that closure", path: connection.path)
        }
    }

    /// Runs one statement with bound arguments (`sqlite3_prepare_v3`, `sqlite3_bind_*`, `sqlite3_step`).
    public func execute(_ sql: String, _ arguments: [DatabaseValue] = []) throws {
        try checkOpen()
        try connection.runningUserSQL { try connection.execute(sql, arguments) }
    }

    /// Runs several `;`-separated statements without arguments (`sqlite3_exec`).
    public func executeScript(_ sql: String) throws {
        try checkOpen()
        try connection.runningUserSQL { try connection.execute(sql) }
    }

    /// The rows of one statement.
    public func rows(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [Row] {
        try checkOpen()
        return try connection.runningUserSQL {
            let statement = try connection.prepare(sql)
            let columns = (0..<statement.columnCount).map(statement.columnName(at:))
            return try statement.rows(arguments).map { Row(columns: columns, values: $0) }
        }
    }

    /// The first column of the first row, or nil.
    public func value(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> DatabaseValue? {
        try checkOpen()
        return try connection.runningUserSQL { try connection.prepare(sql).rows(arguments).first?.first }
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed (`sqlite3_changes`).
    public var changes: Int { connection.changes }

    /// Runs `body` in a savepoint: undone if it throws. Savepoints nest.
    public func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        try checkOpen()
        return try connection.inSavepoint(body)
    }

    /// SQLite's plan for a statement (`EXPLAIN QUERY PLAN`).
    public func explain(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> [QueryPlanStep] {
        try checkOpen()
        return try connection.runningUserSQL { try connection.explainQueryPlan(sql, arguments) }
    }

    // MARK: Introspection

    /// The user tables, sorted, without SQLite's and Strata's bookkeeping tables.
    public func tables() throws -> [String] {
        try checkOpen()
        return try connection.rows("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                            + "AND name NOT LIKE 'strata_%' ORDER BY name").compactMap { String.fromDatabaseValue($0[0]) }
    }

    /// Whether a table or view of this name exists.
    public func tableExists(_ table: String) throws -> Bool {
        try checkOpen()
        return try connection.rows("SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?", [.text(table)]).count > 0
    }

    /// The columns of a table, in order (`PRAGMA table_info`); empty when there is no such table.
    public func columns(in table: String) throws -> [ColumnInfo] {
        try checkOpen()
        return try connection.rows("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)", [.text(table)])
            .map { row in
                ColumnInfo(name: String.fromDatabaseValue(row[0]) ?? "", type: String.fromDatabaseValue(row[1]) ?? "",
                           isNotNull: row[2] == .integer(1), defaultSQL: String.fromDatabaseValue(row[3]),
                           isPrimaryKey: row[4] != .integer(0))
            }
    }

    /// Whether a table has a column of this name (case-insensitive, as in SQL).
    public func columnExists(_ column: String, in table: String) throws -> Bool {
        try columns(in: table).contains { $0.name.caseInsensitiveCompare(column) == .orderedSame }
    }

    /// The names of the indexes on a table (automatic ones included).
    public func indexes(on table: String) throws -> [String] {
        try checkOpen()
        return try connection.rows("SELECT name FROM pragma_index_list(?) ORDER BY name", [.text(table)])
            .compactMap { String.fromDatabaseValue($0[0]) }
    }

    /// The schema version recorded in the file (0 for a file Strata never opened).
    public func schemaVersion() throws -> Int {
        try checkOpen()
        guard try tableExists(SchemaMigrator.metaTable) else { return 0 }
        let value = try connection.rows("SELECT value FROM \(SchemaMigrator.metaTable) WHERE key = 'schema_version'").first?.first
        return Int.fromDatabaseValue(value ?? .null) ?? 0
    }
}

/// A named, ordered migration: run once, in order, inside the opening transaction, and recorded.
///
/// ```swift
/// let migrations = [
///     Migration("rename-starred") { db in
///         try db.execute("ALTER TABLE articles RENAME COLUMN starred TO isStarred")
///     },
///     Migration("fill-titles") { db in
///         try db.execute("UPDATE articles SET title = url WHERE title = ''")
///     },
/// ]
/// ```
/// Migrations upgrade existing files and run before the automatic (lightweight) migration that
/// adds new tables, columns and indexes. A new file is created at the latest schema, so its
/// migrations are recorded as applied without running. If one throws, nothing of the opening
/// transaction is kept: the file stays as it was.
public struct Migration: Sendable {
    /// The migration's name, recorded in `strata_migrations` once it has run.
    public let name: String
    let body: @Sendable (Database) throws -> Void

    /// A migration named `name` (recorded in the file, so never rename one that shipped) that runs
    /// `body` once per file.
    public init(_ name: String, _ body: @escaping @Sendable (Database) throws -> Void) {
        self.name = name
        self.body = body
    }
}
