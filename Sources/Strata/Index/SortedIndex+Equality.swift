/// Equality on the snapshot order's leading attributes, answered by the sorted index: the rows
/// whose first attributes hold given values are one run of ``slots``, found by two binary
/// searches. A declared index on those attributes needs no hash maps of its own
/// (``EntityTable/hashedDeclarations(of:)``): an index on `published` beside a snapshot order by
/// `published` would hash 100,000 nearly unique dates at every warm start for lookups the order
/// already answers in O(log n).
extension SortedIndex {
    /// How many of the order's leading attributes `equalities` (values by attribute position)
    /// pin, one after another from the first; 0 when the first has none.
    func pinnedPrefix(_ equalities: [Int: DatabaseValue]) -> Int {
        order.prefix { equalities[$0.position] != nil }.count
    }

    /// Whether `equalities` are on the order's first attributes and nothing else, so that the run
    /// ``equalRun(_:in:)`` finds is exactly their matches (none of them NULL, which equals nothing).
    func answersExactly(_ equalities: [Int: DatabaseValue]) -> Bool {
        !equalities.isEmpty && pinnedPrefix(equalities) == equalities.count
    }

    /// The slots (settled: ``settle(in:)`` first) whose first `prefix` order attributes equal
    /// `equalities`' values as SQLite compares them: numbers take the attribute's class first, as
    /// a hash index's keys do (``DatabaseValue/normalized(_:)``), then compare by value.
    func equalRun(_ equalities: [Int: DatabaseValue], prefix: Int, in table: ColumnTable) -> ArraySlice<Int> {
        let pinned = order.prefix(prefix).map { entry in
            (position: entry.position, ascending: entry.ascending,
             value: equalities[entry.position]!.normalized(ordering.schema.attributes[entry.position].type.numberClass))
        }
        // The row at `slot` against the pinned values, in the index's order: < 0 before them.
        func compare(_ slot: Int) -> Int {
            for attribute in pinned {
                let order = DatabaseValue.compare(table.value(at: slot, attribute.position), attribute.value)
                if order != 0 { return attribute.ascending ? order : -order }
            }
            return 0
        }
        let start = boundary { compare($0) < 0 }
        let end = start + boundary(from: start) { compare($0) <= 0 }
        return slots[start..<end]
    }

    /// The first place from `start` in ``slots`` whose slot does not satisfy `before`, which
    /// holds for a leading run of them; counted from `start`.
    private func boundary(from start: Int = 0, _ before: (Int) -> Bool) -> Int {
        var low = start, high = slots.count
        while low < high {
            let middle = (low + high) / 2
            if before(slots[middle]) { low = middle + 1 } else { high = middle }
        }
        return low - start
    }
}
