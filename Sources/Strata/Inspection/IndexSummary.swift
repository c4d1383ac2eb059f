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

    public let name: String
    public let table: String
    /// The indexed columns, in index order.
    public let columns: [String]
    public let isUnique: Bool
    public let origin: Origin
}
