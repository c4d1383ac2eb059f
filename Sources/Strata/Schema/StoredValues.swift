/// Named values kept in the store file beside the app's data (`strata_values`, bookkeeping
/// format 3): a sync engine's cursor, its next batch number, an app's own bookmarks.
///
/// A change set carries writes of them (``ChangeSet/setStoredValue(_:forKey:)``), which the
/// writer applies inside the change set's savepoint, after its operations: the values and the
/// rows are committed together or not at all. They are not entity rows: the change log and the
/// history never record them, and contexts never see them.
enum StoredValues {
    static let table = "strata_values"

    static let createSQL = "CREATE TABLE IF NOT EXISTS \(table) (key TEXT NOT NULL PRIMARY KEY, value);"

    /// Writes `values` in order: a value replaces the key's, nil removes the key.
    static func write(_ values: [(key: String, value: DatabaseValue?)], _ connection: Connection) throws {
        for (key, value) in values {
            if let value {
                try connection.execute("INSERT INTO \(table) (key, value) VALUES (?, ?) "
                                       + "ON CONFLICT(key) DO UPDATE SET value = excluded.value", [.text(key), value])
            } else {
                try connection.execute("DELETE FROM \(table) WHERE key = ?", [.text(key)])
            }
        }
    }

    /// The value stored under `key`, or nil.
    static func value(forKey key: String, _ connection: Connection) throws -> DatabaseValue? {
        try connection.rows("SELECT value FROM \(table) WHERE key = ?", [.text(key)]).first?.first
    }

    /// Every value whose key starts with `prefix` (compared byte by byte), by key.
    static func values(withPrefix prefix: String, _ connection: Connection) throws -> [String: DatabaseValue] {
        var found: [String: DatabaseValue] = [:]
        // substr on the key's bytes: LIKE would read `_` and `%` in the prefix as patterns.
        for row in try connection.rows("SELECT key, value FROM \(table) WHERE substr(CAST(key AS BLOB), 1, ?) = CAST(? AS BLOB)",
                                       [.integer(Int64(prefix.utf8.count)), .text(prefix)]) {
            if let key = String.fromDatabaseValue(row[0]) { found[key] = row[1] }
        }
        return found
    }
}
