/// An untyped query for ``StoreInspector``: an entity named at run time, a ``Filter``, a sort
/// order and a window — the same semantics as ``Query``, checked against the store's recorded schema.
public struct InspectionQuery: Sendable, Hashable {
    /// The entity's name or table name (case-insensitive).
    public var entity: String
    /// Which rows match.
    public var filter: Filter
    /// The order of the rows; the primary key breaks ties.
    public var sortKeys: [SortKey]
    /// At most this many rows; nil for all.
    public var limit: Int?
    /// Rows skipped before the first one returned.
    public var offset: Int

    /// A query of `entity`, matching `filter`, sorted and windowed as given.

    public init(entity: String, where filter: Filter = .all, sortedBy sortKeys: [SortKey] = [], limit: Int? = nil,
                offset: Int = 0) {
        self.entity = entity
        self.filter = filter
        self.sortKeys = sortKeys
        self.limit = limit
        self.offset = offset
    }
}
