/// The on-disk size of a store: its database file, its write-ahead log and its pages.
public struct StoreFileSizes: Sendable, Hashable {
    /// The database file, in bytes.
    public let database: Int64
    /// The `-wal` file, in bytes; nil when there is none.
    public let wal: Int64?
    /// SQLite's page size, in bytes.
    public let pageSize: Int
    /// Pages in the database as a reader sees it (the WAL's included).
    public let pageCount: Int
    /// Pages on the freelist (what `VACUUM` would give back).
    public let freePages: Int
}
