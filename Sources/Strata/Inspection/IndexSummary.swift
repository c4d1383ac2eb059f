/// One index on an entity's table, as SQLite reports it (`PRAGMA index_list`, `index_info`).
public struct IndexSummary: Sendable, Hashable {
    /// Why the index exists.
    public enum Origin: String, Sendable, Hashable {
        /// Declared (`CREATE INDEX`, from ``Entity/indexes``).
        case declared
        /// SQLite's index for a UNIQUE constraint.
        case uniqueConstraint
        /// SQLite's index for a non-integer PRIMARY KEY.
        case primaryKey
    }

    /// The index's name in the database.
    public let name: String
    /// The table it indexes.
    public let table: String
    /// The indexed columns, in index order.
    public let columns: [String]
    /// Whether two rows may not share the indexed values.
    public let isUnique: Bool
    /// Why the index exists.
    public let origin: Origin
}
