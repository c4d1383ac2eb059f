import Foundation

/// What a ``LiveQuery`` keeps to follow merges besides the app's values: every match in order and
/// the window's keys and rows, and how a change moves them. A value, and computed only from a
/// table: a merge prepared off the main actor brings a copy up to date on its copy of the tables
/// (``PreparedMerge``), so the main actor only adopts the result and builds the window's values.
struct LiveWindow: Sendable {
    /// How the window changed: the difference of its keys, and the keys whose rows changed
    /// (in the window before and after).
    struct Change: Sendable {
        let difference: CollectionDifference<DatabaseValue>
        let updated: [DatabaseValue]
        var isEmpty: Bool { difference.isEmpty && updated.isEmpty }
    }

    let resolved: ResolvedQuery
    /// Every match in order, without the window: the values it is ordered by (the sort
    /// attributes, then the key), flat. Not whole rows: recomputing a result of 70,000 matches
    /// would copy every text value out of the table. Keyed by the stored key, not the app's ID
    /// type: code generic over the app's type is not specialized in this module.
    private var entries: SortedMatches
    /// Each match's sort values by key, for placing a few changes one by one; built when first
    /// needed after a recompute or a merge, then kept up to date by those placements.
    private var members: [DatabaseValue: [DatabaseValue]]?
    /// The stored keys of the window. A change diffs the window by these; the live query makes
    /// IDs only for what changed.
    private(set) var keys: [DatabaseValue] = []
    /// The rows of the objects in the window, by key: what tells an updated object from one a
    /// change named but left as it was.
    private var windowRows: [DatabaseValue: [DatabaseValue]] = [:]

    init(_ resolved: ResolvedQuery) {
        self.resolved = resolved
        entries = SortedMatches(width: resolved.sort.count + 1)
    }

    /// Brings the window up to date with a change whose objects of the query's entity are
    /// `changed`: re-running the query costs a filter over every candidate and a sort; placing
    /// the changes costs a pass over the entries and a sort of the changes.
    mutating func apply(_ changed: Set<DatabaseValue>, _ table: EntityTable) throws -> Change {
        if changed.count > max(64, entries.count) { return try recompute(table, updated: changed) }
        if changed.count <= Self.changesPlacedOneByOne {
            var members = self.members ?? Dictionary(uniqueKeysWithValues: (0..<entries.count).map {
                (entries.key(at: $0), Array(entries.sortValues(at: $0)))
            })
            for key in changed {
                if let old = members.removeValue(forKey: key) { entries.remove(at: position(of: old, key)) }
                if let sort = sortValues(key, table) {
                    entries.insert(sort, at: entries.insertionIndex(sort, resolved))
                    members[key] = sort
                }
            }
            self.members = members
        } else {
            merge(changed, table)
        }
        return diffWindow(candidates: changed, table)
    }

    /// Re-runs the query over `table` and diffs the window against the previous one; `updated`:
    /// the keys whose rows may have changed.
    mutating func recompute(_ table: EntityTable, updated: Set<DatabaseValue> = []) throws -> Change {
        entries = try table.sortedMatches(resolved)
        members = nil
        return diffWindow(candidates: updated, table)
    }

    /// Diffs the window of ``entries`` against the previous one, by key, and takes it.
    private mutating func diffWindow(candidates: Set<DatabaseValue>, _ table: EntityTable) -> Change {
        let newKeys = resolved.window(Array(0..<entries.count)).map { entries.key(at: $0) }
        let difference = OrderedDifference.make(from: keys, to: newKeys)
        let updated = updatedRows(newKeys, candidates: candidates, table)
        keys = newKeys
        return Change(difference: difference, updated: updated)
    }

    /// The kept keys among `candidates` whose row changed, and the window's rows from now on
    /// (rows are read again only for the candidates and the keys new to the window; the others'
    /// rows did not change).
    private mutating func updatedRows(_ newKeys: [DatabaseValue], candidates: Set<DatabaseValue>,
                                      _ table: EntityTable) -> [DatabaseValue] {
        var rows: [DatabaseValue: [DatabaseValue]] = [:]
        rows.reserveCapacity(newKeys.count)
        var updated: [DatabaseValue] = []
        for key in newKeys {
            let isCandidate = candidates.contains(key)
            let old = windowRows[key]
            let row = isCandidate || old == nil ? table.visibleRow(key) : old
            rows[key] = row
            if let old, isCandidate, row != old { updated.append(key) }
        }
        windowRows = rows
        return updated
    }

    /// Up to how many changed keys are placed one by one (each a binary search and an array
    /// insertion that moves the entries after it); more are merged in one pass.
    static var changesPlacedOneByOne: Int { 16 }

    /// The values `key`'s object is ordered by, if the table shows it and it matches the filter.
    private func sortValues(_ key: DatabaseValue, _ table: EntityTable) -> [DatabaseValue]? {
        var sort: [DatabaseValue] = []
        return table.appendSortValues(key, ifMatching: resolved, to: &sort) ? sort : nil
    }

    /// Places many changed keys at once: their new entries are sorted among themselves and merged
    /// with the others in one pass that also drops their old ones — O(n + k log k) for k changes
    /// among n entries, where placing each (an insertion into the array) would move O(n) entries
    /// k times.
    private mutating func merge(_ changed: Set<DatabaseValue>, _ table: EntityTable) {
        var added = changed.compactMap { sortValues($0, table) }
        added.sort { lhs, rhs in
            lhs.withUnsafeBufferPointer { left in
                rhs.withUnsafeBufferPointer { right in resolved.sortValuesInIncreasingOrder(left[...], right[...]) }
            }
        }
        entries = entries.merging(removing: changed, adding: added, resolved)
        members = nil
    }

    private func position(of sort: [DatabaseValue], _ key: DatabaseValue) -> Int {
        let index = entries.insertionIndex(sort, resolved)
        if index < entries.count, entries.key(at: index) == key { return index }
        return (0..<entries.count).first { entries.key(at: $0) == key }!
    }
}
