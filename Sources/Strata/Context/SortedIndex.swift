/// The saved copies' slots in the entity's ``EntitySchema/snapshotOrder`` (ties by primary key,
/// ascending, as SQL breaks them): a query ordered that way reads its first matches from the
/// start of the index and stops, instead of ordering every match ("the 50 newest unread" of
/// 100,000 articles looks at a few dozen).
///
/// Changes are not placed one by one: a changed slot is only marked (``touch(_:)``), and the
/// marks are placed together when the index is next read (``settle(in:)``) — one pass over the
/// index, plus a binary search per changed slot, whatever the number of changes. A merge prepared
/// off the main actor settles its copy before the main actor adopts it.
struct SortedIndex: Sendable {
    /// The order (attribute positions and directions, then the key), as a query orders.
    let ordering: ResolvedQuery
    var order: [(position: Int, ascending: Bool)] { ordering.sort }
    /// The slots in order, as of the last settle.
    private(set) var slots: [Int] = []
    /// Slots changed since (inserted, removed, or with a sort attribute changed).
    private var touched: Set<Int> = []

    /// An empty index for `schema`'s snapshot order, or nil when the entity declares none.
    init?(schema: EntitySchema) throws {
        guard !schema.snapshotOrder.isEmpty else { return nil }
        ordering = try ResolvedQuery(schema: schema, filter: .all, sortKeys: schema.snapshotOrder)
    }

    /// Whether a query ordered by `sort` (its positions and directions) is ordered as this index.
    func orders(_ sort: [(position: Int, ascending: Bool)]) -> Bool {
        sort.count == order.count && zip(sort, order).allSatisfy { $0.position == $1.position && $0.ascending == $1.ascending }
    }

    /// Whether row `a` comes before row `b`.
    func precedes(_ a: some RowSource, _ b: some RowSource) -> Bool { ordering.areInIncreasingOrder(a, b) }

    /// The index over every row of `block` (slots are row numbers): a block a snapshot archived
    /// in this order is sorted in one pass.
    static func built(over block: ColumnBlock, schema: EntitySchema) throws -> SortedIndex? {
        guard var index = try SortedIndex(schema: schema) else { return nil }
        // Ordered as a query is (each row's sort values read once); the sort finds runs, so rows
        // already in order cost one comparison each.
        var matches = EntityTable.Matches(ordering: index.ordering, keyPosition: schema.primaryKeyIndex)
        matches.slots = Array(0..<block.count)
        for row in 0..<block.count { matches.appendSortValues(of: block.rowView(at: row)) }
        index.slots = EntityTable.order(matches, index.ordering) { block.key(at: $0) }
        return index
    }

    /// Marks `slot` changed: placed again (or dropped, when it no longer holds a row) at the next settle.
    mutating func touch(_ slot: Int) { touched.insert(slot) }

    /// Marks every live slot of `table`, for an index made after the rows.
    mutating func touchAll(in table: ColumnTable) {
        for slot in table.liveSlots { touched.insert(slot) }
    }

    var isSettled: Bool { touched.isEmpty }

    /// Places the changed slots: each touched slot leaves its old place, and those holding a row
    /// are put back where their values now sort.
    mutating func settle(in table: ColumnTable) {
        guard !touched.isEmpty else { return }
        let kept = slots.filter { !touched.contains($0) }
        let fresh = touched.filter(table.isLive).sorted { precedes(table.rowView(at: $0), table.rowView(at: $1)) }
        touched = []
        guard !fresh.isEmpty else {
            slots = kept
            return
        }
        var merged: [Int] = []
        merged.reserveCapacity(kept.count + fresh.count)
        var start = 0
        for slot in fresh {
            // The first kept slot that comes after `slot` (fresh slots are in order: search on).
            var low = start, high = kept.count
            let row = table.rowView(at: slot)
            while low < high {
                let middle = (low + high) / 2
                if precedes(table.rowView(at: kept[middle]), row) { low = middle + 1 } else { high = middle }
            }
            merged.append(contentsOf: kept[start..<low])
            merged.append(slot)
            start = low
        }
        merged.append(contentsOf: kept[start...])
        slots = merged
    }
}
