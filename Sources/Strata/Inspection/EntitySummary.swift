/// One recorded entity of an inspected store.
public struct EntitySummary: Sendable, Hashable {
    /// The schema the store recorded for the entity (`strata_entities`).
    public let schema: EntitySchema
    /// The number of rows in its table; nil when the table is missing.
    public let rowCount: Int?
    /// The indexes on its table, by name (SQLite's automatic ones included).
    public let indexes: [IndexSummary]
    /// The FTS5 table that indexes its full-text attributes, when it exists.
    public let fullTextTable: String?
}
