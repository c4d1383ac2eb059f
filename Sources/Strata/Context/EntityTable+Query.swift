import Foundation

/// Queries over what a table shows, evaluated in memory: the candidates' cells are read in place
/// (only the attributes the filter and the order name), keys are made only for the objects a
/// caller gets, and a query with a limit orders only as many matches as its window needs.
extension EntityTable {
    /// The objects matching a query's filter, not yet ordered: saved copies by slot, then unsaved
    /// edits by key, and the values each is ordered by — flat, `width` per match (no array per
    /// match). The key is among them only when the query has no sort attribute; otherwise it only
    /// breaks ties, and is read when two matches tie.
    struct Matches {
        var slots: [Int] = []
        var edited: [DatabaseValue] = []
        var sortValues: [DatabaseValue] = []
        var width = 0
        var keyIsSorted = false
        /// Set when the saved matches are ordered by their places in the snapshot order's index
        /// (``SortedIndex/ranks``, settled) instead of by ``sortValues``, which are then not read:
        /// the query is in that order and no unsaved edit matches.
        var ranks: [Int32]?
        /// Set when the saved matches are ordered by comparing their cells in place
        /// (``RowOrder``) instead of by ``sortValues``, which are then not read: no unsaved edit
        /// matches, and the snapshot order's ranks do not apply.
        var ordersInPlace = false
        var count: Int { slots.count + edited.count }
        private var sortPositions: [Int] = []

        /// No match yet, for a query ordered as `resolved` is, whose key is at `keyPosition`.
        init(ordering resolved: ResolvedQuery, keyPosition: Int) {
            keyIsSorted = resolved.sort.isEmpty
            sortPositions = resolved.sort.map(\.position) + (keyIsSorted ? [keyPosition] : [])
            width = sortPositions.count
        }

        /// Appends the values the match `row` (just appended) is ordered by.
        mutating func appendSortValues(of row: some RowSource) {
            for position in sortPositions { sortValues.append(row.value(at: position)) }
        }
    }

    /// The matches of `resolved`'s filter among the candidates (``candidates(_:)``). A query
    /// with a limit, ordered by the entity's snapshot order, whose filter no key or index narrows,
    /// takes its saved matches from the start of that order and stops at its window's end
    /// (``orderedMatches(_:_:)``). With `ranking`, a query in that order whose candidates
    /// include no unsaved edit orders its matches by their places in the index (``Matches/ranks``:
    /// integers, no sort value read) — for callers that only order the matches, not for those
    /// that keep their sort values; otherwise, when no unsaved edit is among the candidates, it
    /// orders them by their cells in place (``Matches/ordersInPlace``).
    func matches(_ resolved: ResolvedQuery, ranking: Bool = false) throws -> Matches {
        let inOrder = ordered?.orders(resolved.sort) == true
        let walks = resolved.limit != nil && inOrder
        var candidates = try candidates(resolved.filter, listingScan: !walks)
        if candidates.isScan, walks, let matches = orderedMatches(resolved, candidates) { return matches }
        if candidates.isScan, walks { candidates = try self.candidates(resolved.filter) }
        var matches = Matches(ordering: resolved, keyPosition: schema.primaryKeyIndex)
        if ranking, candidates.edited.isEmpty {
            if inOrder {
                settleOrder()
                matches.ranks = ordered?.ranks
            }
            matches.ordersInPlace = matches.ranks == nil
        }
        let readsSortValues = matches.ranks == nil && !matches.ordersInPlace
        for slot in candidates.slots {
            let view = saved.rowView(at: slot)
            guard candidates.admits(view, resolved.filter) else { continue }
            matches.slots.append(slot)
            if readsSortValues { matches.appendSortValues(of: view) }
        }
        appendEditedMatches(candidates.edited, resolved, to: &matches)
        return matches
    }

    /// Appends the unsaved edits among `keys` that match `resolved`'s filter.
    private func appendEditedMatches(_ keys: [DatabaseValue], _ resolved: ResolvedQuery, to matches: inout Matches) {
        for key in keys {
            guard let row = edits[key]?.row, resolved.filter.matches(row) else { continue }
            matches.edited.append(key)
            matches.appendSortValues(of: row)
        }
    }

    /// The first saved matches in the snapshot order's index — as many as the window needs — and
    /// every matching edit, or nil when the index does not apply (no limit, another order). The
    /// window is exact: a saved match past those comes after all of them in the query's order.
    private func orderedMatches(_ resolved: ResolvedQuery, _ candidates: Candidates) -> Matches? {
        guard let needed = resolved.windowEnd, ordered?.orders(resolved.sort) == true else { return nil }
        settleOrder()
        guard let ordered else { return nil }
        var matches = Matches(ordering: resolved, keyPosition: schema.primaryKeyIndex)
        for slot in ordered.slots where matches.slots.count < needed {
            if !edits.isEmpty, edits[saved.key(at: slot)] != nil { continue }
            let view = saved.rowView(at: slot)
            guard resolved.filter.matches(view) else { continue }
            matches.slots.append(slot)
            matches.appendSortValues(of: view)
        }
        appendEditedMatches(candidates.edited, resolved, to: &matches)
        return matches
    }

    /// Every row's slot in `table`, in `order` (ties by key): the order a snapshot archives
    /// the saved copies in. Reads only `table`, so it runs on a copy off the main actor.
    static func slots(of table: ColumnTable, in order: [SortKey]) throws -> [Int] {
        let resolved = try ResolvedQuery(schema: table.schema, filter: .all, sortKeys: order)
        return table.order(by: resolved.sort).sorted(table.liveSlots)
    }

    /// The key of match `index`.
    func key(of index: Int, in matches: Matches) -> DatabaseValue {
        index < matches.slots.count ? saved.key(at: matches.slots[index]) : matches.edited[index - matches.slots.count]
    }

    /// The matches' indexes in the query's order (SQL's: the sort attributes, then the key
    /// ascending) — only the first `needed` when given: a bounded insertion then keeps the
    /// smallest ones, O(n log k) instead of sorting all n.
    func order(_ matches: Matches, _ resolved: ResolvedQuery, first needed: Int? = nil) -> [Int] {
        if let ranks = matches.ranks { return Self.orderByRank(matches.slots, ranks, first: needed) }
        if matches.ordersInPlace {
            let rows = saved.order(by: resolved.sort), slots = matches.slots
            return Self.indexes(matches.count, first: needed) { rows.precedes(slots[$0], slots[$1]) }
        }
        let ascending = resolved.sort.map(\.ascending) + (matches.keyIsSorted ? [true] : [])
        let width = matches.width
        return matches.sortValues.withUnsafeBufferPointer { values in
            func precedes(_ lhs: Int, _ rhs: Int) -> Bool {
                for column in 0..<width {
                    let order = DatabaseValue.compare(values[lhs * width + column], values[rhs * width + column])
                    if order != 0 { return ascending[column] ? order < 0 : order > 0 }
                }
                return !matches.keyIsSorted && DatabaseValue.compare(key(of: lhs, in: matches), key(of: rhs, in: matches)) < 0
            }
            return Self.indexes(matches.count, first: needed, by: precedes)
        }
    }

    /// The indexes `0..<count` ordered by `precedes` — only the first `needed` when given and
    /// fewer than half: a bounded insertion then keeps the smallest ones.
    static func indexes(_ count: Int, first needed: Int?, by precedes: (Int, Int) -> Bool) -> [Int] {
        guard let needed, needed < count / 2 else { return (0..<count).sorted(by: precedes) }
        var first: [Int] = []
        first.reserveCapacity(needed + 1)
        for index in 0..<count where needed > 0 {
            if first.count == needed {
                guard precedes(index, first[needed - 1]) else { continue }
                first.removeLast()
            }
            var low = 0, high = first.count
            while low < high {
                let middle = (low + high) / 2
                if precedes(first[middle], index) { low = middle + 1 } else { high = middle }
            }
            first.insert(index, at: low)
        }
        return first
    }

    /// The indexes of `slots` ordered by their ranks (each slot's place in the snapshot order),
    /// only the first `needed` when given: rank and index packed in one integer each, so the sort
    /// compares plain integers.
    private static func orderByRank(_ slots: [Int], _ ranks: [Int32], first needed: Int?) -> [Int] {
        // The sign bit flipped, so that unsigned order is the ranks' signed order (ranks placed at
        // the head are negative, `SortedIndex.ranks`).
        var packed = slots.indices.map { UInt64(UInt32(bitPattern: ranks[slots[$0]]) ^ 0x8000_0000) << 32 | UInt64($0) }
        packed.sort()
        let count = min(needed ?? packed.count, packed.count)
        return packed[..<count].map { Int(truncatingIfNeeded: $0 & 0xFFFF_FFFF) }
    }

    /// The matches in a query's window, in its order: only as many ordered as the window needs.
    func window(_ matches: Matches, _ resolved: ResolvedQuery) -> [Int] {
        resolved.window(order(matches, resolved, first: resolved.windowEnd))
    }

    /// The keys of the objects in a query's window, in its order. Keys are made for those only.
    func windowKeys(_ resolved: ResolvedQuery) throws -> [DatabaseValue] {
        let matches = try matches(resolved, ranking: true)
        return window(matches, resolved).map { key(of: $0, in: matches) }
    }

    /// The objects in a query's window as ``QueryResults``: their IDs, and their rows copied cell
    /// by cell (saved copies, which are marked read as ``visible(_:_:)`` marks them) or as rows
    /// (unsaved edits).
    func results<E: Entity>(_ type: E.Type, _ resolved: ResolvedQuery) throws -> QueryResults<E> {
        let matches = try matches(resolved, ranking: true)
        let window = window(matches, resolved)
        var ids: [E.ID] = [], slots: [Int] = [], edited: [Int: [DatabaseValue]] = [:]
        ids.reserveCapacity(window.count)
        slots.reserveCapacity(window.count)
        for index in window {
            guard let id = E.ID.fromDatabaseValue(key(of: index, in: matches)) else { continue }
            if index < matches.slots.count {
                let slot = matches.slots[index]
                markRead(slot)
                slots.append(slot)
            } else if let row = edits[matches.edited[index - matches.slots.count]]?.row {
                edited[ids.count] = row
            } else {
                continue
            }
            ids.append(id)
        }
        return QueryResults(ids: ids, saved: saved.block(slots), edited: edited)
    }

    /// Every match, in the query's order (no window), with the values it is ordered by
    /// (``ResolvedQuery/appendSortValues(_:to:)``: the sort attributes, then the key), flat: what a
    /// live query keeps to place changes.
    func sortedMatches(_ resolved: ResolvedQuery) throws -> SortedMatches {
        let matches = try matches(resolved)
        let sorted = resolved.sort.count, width = matches.width
        var values: [DatabaseValue] = []
        values.reserveCapacity(matches.count * (sorted + 1))
        for index in order(matches, resolved) {
            values.append(contentsOf: matches.sortValues[(index * width)..<(index * width + sorted)])
            values.append(key(of: index, in: matches))
        }
        return SortedMatches(width: sorted + 1, values: values)
    }
}
