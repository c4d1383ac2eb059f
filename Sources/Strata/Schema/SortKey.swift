/// One key of a sort order. Ties are always broken by the primary key, ascending.
public struct SortKey: Sendable, Hashable, Codable {
    /// The attribute's coding key.
    public var attribute: String
    /// Whether smaller values come first.
    public var isAscending: Bool

    /// A sort key on an attribute (by coding key), ascending unless told otherwise.
    public init(_ attribute: String, ascending: Bool = true) {
        self.attribute = attribute
        self.isAscending = ascending
    }
}
