import Foundation

/// Everything ``StoreInspector/summary()`` reports about a store file: identity, schema version,
/// entities with row counts and indexes, the change log and the files' sizes.
public struct StoreSummary: Sendable, Hashable {
    /// The database file.
    public let path: String
    /// The store's identity (`strata_meta` `store_id`).
    public let storeID: UUID
    /// The app schema version recorded by the newest app that opened the file.
    public let schemaVersion: Int
    /// The bookkeeping format the file records (see ``StoreInspector/readableFormat``).
    public let format: Int
    /// When the store was created, if recorded.
    public let createdAt: Date?
    /// Every recorded entity, sorted by name.
    public let entities: [EntitySummary]
    /// The change log's extent; its newest generation is the store's generation.
    public let changeLog: ChangeLogRange
    /// The sizes of the database file and its write-ahead log.
    public let files: StoreFileSizes
    /// The schema's history: every named migration and automatic step recorded, oldest first.
    public let migrations: [AppliedMigration]
}
