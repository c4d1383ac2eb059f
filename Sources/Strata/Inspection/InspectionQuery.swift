/// An untyped query for ``StoreInspector``: an entity named at run time, a ``Filter``, a sort
/// order and a window — the same semantics as ``Query``, checked against the store's recorded schema.
public struct InspectionQuery: Sendable, Hashable {
    /// The entity's name or table name (case-insensitive).
    public var entity: String
    public var filter: Filter
    public var sortKeys: [SortKey]
    public var limit: Int?
    public var offset: Int

    public init(entity: String, where filter: Filter = .all, sortedBy sortKeys: [SortKey] = [], limit: Int? = nil,
                offset: Int = 0) {
        self.entity = entity
        self.filter = filter
        self.sortKeys = sortKeys
        self.limit = limit
        self.offset = offset
    }
}
