/// The saved copies' slots in the entity's ``EntitySchema/snapshotOrder`` (ties by primary key,
/// ascending, as SQL breaks them): a query ordered that way reads its first matches from the
/// start of the index and stops, instead of ordering every match ("the 50 newest unread" of
/// 100,000 articles looks at a few dozen).
///
/// Changes are not placed one by one: a changed slot is only marked (``touch(_:)``), and the
/// marks are placed together when the index is next read (``settle(in:)``) — one pass over the
/// index, plus a galloping search per changed slot, whatever the number of changes. A merge prepared
/// off the main actor settles its copy before the main actor adopts it.
struct SortedIndex: Sendable {
    /// The order (attribute positions and directions, then the key), as a query orders.
    let ordering: ResolvedQuery
    var order: [(position: Int, ascending: Bool)] { ordering.sort }
    /// The slots in order, as of the last settle.
    private(set) var slots: [Int] = []
    /// Per slot, a number that increases along ``slots`` (meaningless for a slot that holds no
    /// row): its place as of the last full ranking, moved since for rows placed into one gap
    /// (``placeInOneGap(_:_:)``; negative below the head). A query in this order over matches an
    /// index found orders them by these integers.
    private(set) var ranks: [Int32] = []
    /// Slots changed since (inserted, removed, or with a sort attribute changed), each once…
    private var touched: [Int] = []
    /// …and, per slot, whether it is listed there (shorter than the table when the last slots
    /// were never touched).
    private var isTouched: [Bool] = []
    /// Whether ``touched`` lists its slots in this order already (``touch(inOrder:)``), so that
    /// the settle need not sort them.
    private var touchedInOrder = false

    /// An empty index for `schema`'s snapshot order, or nil when the entity declares none.
    init?(schema: EntitySchema) throws {
        guard !schema.snapshotOrder.isEmpty else { return nil }
        ordering = try ResolvedQuery(schema: schema, filter: .all, sortKeys: schema.snapshotOrder)
    }

    /// Whether a query ordered by `sort` (its positions and directions) is ordered as this index.
    func orders(_ sort: [(position: Int, ascending: Bool)]) -> Bool {
        sort.count == order.count && zip(sort, order).allSatisfy { $0.position == $1.position && $0.ascending == $1.ascending }
    }

    /// The index over every row of `block` (slots are row numbers): a block a snapshot archived
    /// in this order is checked in one pass (``RowOrder/holdsInOrder(_:)``), not sorted.
    static func built(over block: ColumnBlock, schema: EntitySchema) throws -> SortedIndex? {
        guard var index = try SortedIndex(schema: schema) else { return nil }
        let order = block.order(by: index.order)
        let slots: [Int] = FreshMemory.array(count: block.count) { slots in
            for slot in slots.indices { slots.initializeElement(at: slot, to: slot) }
        }
        index.slots = order.holdsInOrder(block.count) ? slots : order.sorted(slots)
        index.rank()
        return index
    }

    /// Marks `slot` changed: placed again (or dropped, when it no longer holds a row) at the next settle.
    mutating func touch(_ slot: Int) {
        touchedInOrder = false
        mark(slot)
    }

    /// Marks `slots`, which come in this index's order (a change set's new rows, listed in the
    /// order their cells were sorted in when it was sealed, by the same comparison) and held no
    /// row at the last settle: when nothing else is marked, the settle takes them as they are
    /// instead of sorting them, and knows that none of them is placed.
    mutating func touch(inOrder slots: [Int]) {
        touchedInOrder = touched.isEmpty
        guard let last = slots.max() else { return }
        growMarks(toCover: last)
        touched.reserveCapacity(touched.count + slots.count)
        isTouched.withUnsafeMutableBufferPointer { isTouched in
            for slot in slots where !isTouched[slot] {
                isTouched[slot] = true
                touched.append(slot)
            }
        }
    }

    private mutating func mark(_ slot: Int) {
        growMarks(toCover: slot)
        guard !isTouched[slot] else { return }
        isTouched[slot] = true
        touched.append(slot)
    }

    /// Makes ``isTouched`` cover `slot`: grown by doubling, as an import touches its new slots in
    /// increasing order, each one past the end.
    private mutating func growMarks(toCover slot: Int) {
        if slot >= isTouched.count {
            isTouched.append(contentsOf: repeatElement(false, count: Swift.max(slot + 1, 2 * isTouched.count) - isTouched.count))
        }
    }

    /// Marks every live slot of `table`, for an index made after the rows.
    mutating func touchAll(in table: ColumnTable) {
        for slot in table.liveSlots { touch(slot) }
    }

    var isSettled: Bool { touched.isEmpty }

    /// Places the changed slots: each touched slot leaves its old place, and those holding a row
    /// are sorted and merged back where their values now sort. Rows are compared cell by cell in
    /// place (``RowOrder``), and each changed slot finds its place by a galloping search from
    /// the previous one's, so changes that cluster in the order (new rows at its head) cost a few
    /// comparisons each. When the changes are only new rows that all sort into one gap between
    /// the rows held (an import of newer articles), they are placed there after one search, and
    /// only they and the shorter side of the gap are ranked (``placeInOneGap(_:_:)``).
    mutating func settle(in table: ColumnTable) {
        guard !touched.isEmpty else { return }
        let rows = table.order(by: order)
        // The slots that stay where they are: all of them when no touched slot is placed yet (an
        // import's new rows) — then no copy of the order is made just to find that out. Slots
        // touched in order are new rows touched while the index was settled, so none is placed.
        let keepsAll = touchedInOrder || !slots.contains { $0 < isTouched.count && isTouched[$0] }
        assert(!touchedInOrder || !slots.contains { $0 < isTouched.count && isTouched[$0] },
               "a slot touched in order is placed already")
        let kept = keepsAll ? slots : slots.filter { $0 >= isTouched.count || !isTouched[$0] }
        let live = touched.filter(table.isLive)
        let fresh = touchedInOrder ? live : rows.sorted(live)
        assert(!touchedInOrder || zip(live, live.dropFirst()).allSatisfy { rows.precedes($0, $1) },
               "slots touched in order are not in the index's order")
        isTouched.withUnsafeMutableBufferPointer { isTouched in
            for slot in touched { isTouched[slot] = false }
        }
        touched.removeAll(keepingCapacity: true)
        touchedInOrder = false
        guard !fresh.isEmpty else {
            slots = kept
            rank()
            return
        }
        if keepsAll, placeInOneGap(fresh, rows) { return }
        var merged: [Int] = []
        merged.reserveCapacity(kept.count + fresh.count)
        var start = 0
        for slot in fresh {
            let end = rows.boundary(of: slot, in: kept, from: start)
            merged.append(contentsOf: kept[start..<end])
            merged.append(slot)
            start = end
        }
        merged.append(contentsOf: kept[start...])
        slots = merged
        rank()
    }

    /// Places `fresh` (sorted, none of them in ``slots``) when they all sort into one gap between
    /// held rows — an import of articles newer than those held, or older than a few newest ones —
    /// ranking only them and the shorter side of the gap, so that no slot is searched for but the
    /// first and most ranks stay. Returns false, changing nothing, otherwise.
    private mutating func placeInOneGap(_ fresh: [Int], _ rows: RowOrder<PagedArena.Filled>) -> Bool {
        guard let firstFresh = fresh.first, let lastFresh = fresh.last, !slots.isEmpty else { return false }
        let gap = rows.boundary(of: firstFresh, in: slots, from: 0)
        if gap < slots.count, !rows.precedes(lastFresh, slots[gap]) { return false }
        let needed = (fresh.max() ?? -1) + 1
        if gap <= slots.count - gap {
            // Ranked down from the first row after the gap: the rows before it, then the fresh ones.
            let first = Int(ranks[slots[gap]]) - gap - fresh.count
            guard first >= Int(Int32.min) else { return false }
            coverRanks(upTo: needed)
            rank(slots[..<gap], fresh, from: first)
        } else {
            // Ranked up from the last row before the gap: the fresh ones, then the rows after it.
            let first = Int(ranks[slots[gap - 1]]) + 1
            guard first + fresh.count + (slots.count - gap) <= Int(Int32.max) else { return false }
            coverRanks(upTo: needed)
            rank(fresh, slots[gap...], from: first)
        }
        slots.insert(contentsOf: fresh, at: gap)
        return true
    }

    /// Ranks the slots of `head`, then those of `tail`, `first`, `first + 1`, …
    private mutating func rank(_ head: some Collection<Int>, _ tail: some Collection<Int>, from first: Int) {
        ranks.withUnsafeMutableBufferPointer { ranks in
            var next = Int32(first)
            for slot in head {
                ranks[slot] = next
                next += 1
            }
            for slot in tail {
                ranks[slot] = next
                next += 1
            }
        }
    }

    /// Makes ``ranks`` hold a rank for every slot below `needed`.
    private mutating func coverRanks(upTo needed: Int) {
        if ranks.isEmpty {
            ranks = FreshMemory.array(repeating: 0, count: needed)
        } else if ranks.count < needed {
            ranks.append(contentsOf: repeatElement(0, count: needed - ranks.count))
        }
    }

    /// Sets ``ranks`` from ``slots``.
    private mutating func rank() {
        coverRanks(upTo: (slots.max() ?? -1) + 1)
        for (place, slot) in slots.enumerated() { ranks[slot] = Int32(truncatingIfNeeded: place) }
    }
}
