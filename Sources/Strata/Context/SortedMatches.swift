/// A live query's matches in its order, flat: for each match the values it is ordered by — the
/// sort attributes', then its key (``ResolvedQuery/appendSortValues(_:to:)``) — `width` values
/// per match in one array. No array per match: placing thousands of changes copies plain values
/// (numbers, short keys), not one reference-counted array per match.
struct SortedMatches {
    /// Values per match: the query's sort attributes, then the key.
    let width: Int
    private(set) var values: [DatabaseValue] = []

    init(width: Int) {
        self.width = width
    }

    /// Takes `matches` (already in order) as they are.
    init(width: Int, values: [DatabaseValue]) {
        self.width = width
        self.values = values
    }

    var count: Int { values.count / width }

    /// The key of match `index`.
    func key(at index: Int) -> DatabaseValue { values[index * width + width - 1] }

    /// The values match `index` is ordered by.
    func sortValues(at index: Int) -> ArraySlice<DatabaseValue> { values[(index * width)..<((index + 1) * width)] }

    mutating func remove(at index: Int) { values.removeSubrange((index * width)..<((index + 1) * width)) }

    mutating func insert(_ sort: [DatabaseValue], at index: Int) { values.insert(contentsOf: sort, at: index * width) }

    /// Where a match ordered by `sort` goes (after every match that precedes it).
    func insertionIndex(_ sort: [DatabaseValue], _ order: ResolvedQuery) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if precedes(middle, sort, order) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Whether match `index` comes before a match ordered by `sort`.
    func precedes(_ index: Int, _ sort: [DatabaseValue], _ order: ResolvedQuery) -> Bool {
        values.withUnsafeBufferPointer { left in
            sort.withUnsafeBufferPointer { right in order.sortValuesInIncreasingOrder(left[(index * width)...], right[...]) }
        }
    }

    /// The matches without those whose key is in `removed`, with `added` (each a match's values,
    /// sorted among themselves by `order`) merged in: one pass, O(n + k).
    func merging(removing removed: Set<DatabaseValue>, adding added: [[DatabaseValue]], _ order: ResolvedQuery) -> SortedMatches {
        var merged = SortedMatches(width: width)
        merged.values.reserveCapacity(values.count + added.count * width)
        var next = 0
        for index in 0..<count where !removed.contains(key(at: index)) {
            while next < added.count, !precedes(index, added[next], order) {
                merged.values.append(contentsOf: added[next])
                next += 1
            }
            merged.values.append(contentsOf: sortValues(at: index))
        }
        for sort in added[next...] { merged.values.append(contentsOf: sort) }
        return merged
    }
}
