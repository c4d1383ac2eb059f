import Foundation

/// The store's change log: every committed insert, update and delete of an entity row gets a
/// monotonically increasing generation (the log's rowid), recorded by triggers — so writes made
/// outside Strata (another process, the `sqlite3` shell) are logged too. The log is pruned past
/// a bound; `strata_meta.log_floor` records the highest generation pruned away.
enum ChangeLog {
    static let table = "strata_changes"

    /// Operation codes stored in the log.
    static let insert: Int64 = 1, update: Int64 = 2, delete: Int64 = 3

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS \(table) (
            generation INTEGER PRIMARY KEY, entity INTEGER NOT NULL, key NOT NULL, op INTEGER NOT NULL);
        """

    /// Triggers that log changes to `schema`'s table. `code` identifies the entity compactly.
    static func triggersSQL(_ schema: EntitySchema, code: Int64) -> String {
        let table = schema.table.quotedIdentifier
        let key = schema.primaryKey.column.quotedIdentifier
        let prefix = "strata_log_" + schema.table
        return """
            CREATE TRIGGER IF NOT EXISTS \((prefix + "_insert").quotedIdentifier) AFTER INSERT ON \(table) BEGIN
                INSERT INTO \(Self.table) (entity, key, op) VALUES (\(code), new.\(key), \(insert));
            END;
            CREATE TRIGGER IF NOT EXISTS \((prefix + "_update").quotedIdentifier) AFTER UPDATE ON \(table) BEGIN
                INSERT INTO \(Self.table) (entity, key, op) SELECT \(code), old.\(key), \(delete) WHERE old.\(key) IS NOT new.\(key);
                INSERT INTO \(Self.table) (entity, key, op) VALUES (\(code), new.\(key), \(update));
            END;
            CREATE TRIGGER IF NOT EXISTS \((prefix + "_delete").quotedIdentifier) AFTER DELETE ON \(table) BEGIN
                INSERT INTO \(Self.table) (entity, key, op) VALUES (\(code), old.\(key), \(delete));
            END;
            """
    }

    /// The newest generation (0 for an empty log).
    static func generation(_ connection: Connection) throws -> Int64 {
        Int64.fromDatabaseValue(try connection.rows("SELECT max(generation) FROM \(table)").first?.first ?? .null) ?? 0
    }

    /// The highest generation pruned from the log: changes after it are all still there.
    static func floor(_ connection: Connection) throws -> Int64 {
        let value = try connection.rows("SELECT value FROM \(SchemaMigrator.metaTable) WHERE key = 'log_floor'").first?.first
        return Int64.fromDatabaseValue(value ?? .null) ?? 0
    }

    /// Deletes the oldest entries so that at most `limit` remain (the newest is always kept, so
    /// generations never go backwards), and raises the floor.
    static func prune(_ connection: Connection, limit: Int) throws {
        let newest = try generation(connection)
        let cut = newest - Int64(max(1, limit))
        guard cut > (try floor(connection)) else { return }
        try connection.execute("DELETE FROM \(table) WHERE generation <= ?", [.integer(cut)])
        try connection.execute("INSERT INTO \(SchemaMigrator.metaTable) (key, value) VALUES ('log_floor', ?) "
                               + "ON CONFLICT(key) DO UPDATE SET value = excluded.value", [.integer(cut)])
    }
}

/// A position in the store's change log, for asking what changed since.
public struct ChangeToken: Sendable, Hashable, Codable, Comparable {
    /// The generation: every committed change up to it is before the token.
    public let generation: Int64

    public init(generation: Int64) { self.generation = generation }

    public static func < (lhs: ChangeToken, rhs: ChangeToken) -> Bool { lhs.generation < rhs.generation }
}

/// One entry of the change log.
public struct LoggedChange: Sendable, Hashable {
    public enum Operation: Sendable, Hashable { case insert, update, delete }
    public let generation: Int64
    public let entity: String
    /// The object's primary key as stored.
    public let key: DatabaseValue
    public let operation: Operation
}

/// What changed since a token, and the token to ask from next time.
public struct ChangeHistory: Sendable {
    public let changes: [LoggedChange]
    public let token: ChangeToken

    /// The keys of one entity's objects that were inserted or updated (and still exist), and
    /// those deleted, collapsing repeated changes to the same object.
    public func keys(of entity: String) -> (changed: Set<DatabaseValue>, deleted: Set<DatabaseValue>) {
        var last: [DatabaseValue: LoggedChange.Operation] = [:]
        for change in changes where change.entity == entity { last[change.key] = change.operation }
        var changed: Set<DatabaseValue> = [], deleted: Set<DatabaseValue> = []
        for (key, operation) in last {
            if operation == .delete { deleted.insert(key) } else { changed.insert(key) }
        }
        return (changed, deleted)
    }
}
