import Foundation

/// Which objects a filter is evaluated on: the keys it pins, an in-memory index's matches (the
/// full-text index for `.matches`, a hash index or the snapshot order's for equalities), or every
/// object the table shows.
extension EntityTable {
    /// What a filter is evaluated on, each object once: saved copies by slot (those not being
    /// edited) and unsaved edits by key.
    struct Candidates {
        var slots: [Int] = []
        var edited: [DatabaseValue] = []
        /// Whether every saved copy in `slots` is known to match (an index answered the whole
        /// filter): only the edits need evaluating.
        var slotsMatch = false
        /// Whether `slots` are every saved copy not being edited (no key or index narrowed them).
        var isScan = false
        /// What is left of the filter to evaluate on the saved copies in `slots`, when an index
        /// answered part of it (the full-text index, its `.matches` conditions); nil: the whole
        /// filter (unless ``slotsMatch``).
        var slotFilter: ResolvedFilter?

        /// Whether the saved copy `row`, one of ``slots``, matches `filter` (the whole filter).
        func admits(_ row: some RowSource, _ filter: ResolvedFilter) -> Bool {
            slotsMatch || (slotFilter ?? filter).matches(row)
        }
    }

    /// Every object the context shows (the saved copies' slots only when `listing`).
    private func scanCandidates(listing: Bool) -> Candidates {
        var candidates = Candidates()
        if listing {
            let live = saved.liveSlots
            candidates.slots = edits.isEmpty ? live : live.filter { edits[saved.key(at: $0)] == nil }
        }
        candidates.edited = edits.compactMap { $0.value.row == nil ? nil : $0.key }
        candidates.isScan = true
        return candidates
    }

    /// Places the saved copies changed since the snapshot order's index was last read (see
    /// ``SortedIndex/settle(in:)``): what a merge prepared off the main actor does before the
    /// main actor adopts its tables.
    func settleOrder() { ordered?.settle(in: saved) }

    /// The objects a filter has to be evaluated on: the keys it pins when they are fewer than the
    /// objects shown (never more lookups than a scan), else an index's matches, else everything
    /// (`isScan`; the saved copies' slots are listed only when `listingScan`).
    func candidates(_ filter: ResolvedFilter, listingScan: Bool = true) throws -> Candidates {
        var candidates = Candidates()
        if let keys = lookupKeys(filter), keys.count <= saved.count + edits.count {
            for key in keys {
                if let edit = edits[key] {
                    if edit.row != nil { candidates.edited.append(key) }
                } else if let slot = saved.slot(of: key) {
                    candidates.slots.append(slot)
                }
            }
            return candidates
        }
        if let (slots, rest) = fullTextCandidates(filter) {
            candidates.slots = edits.isEmpty ? slots : slots.filter { edits[saved.key(at: $0)] == nil }
            candidates.edited = edits.compactMap { $0.value.row == nil ? nil : $0.key }
            candidates.slotFilter = rest
            candidates.slotsMatch = rest == nil
            return candidates
        }
        if let (indexed, exact) = try indexedCandidates(filter) {
            candidates.slots = edits.isEmpty ? indexed : indexed.filter { edits[saved.key(at: $0)] == nil }
            candidates.edited = edits.compactMap { $0.value.row == nil ? nil : $0.key }
            candidates.slotsMatch = exact
            return candidates
        }
        return scanCandidates(listing: listingScan)
    }

    /// The distinct keys a filter pins (``ResolvedFilter/requiredKeys``) as held keys are stored —
    /// numbers in the key attribute's class, so that `id IN (1.0)` finds the integer key 1, NULL
    /// (which equals nothing) left out — or nil when some comparison is not a plain hash lookup
    /// in SQL (``InMemoryIndex/decidesEquality(_:in:)``) or the filter pins no key.
    func lookupKeys(_ filter: ResolvedFilter) -> [DatabaseValue]? {
        let type = schema.primaryKey.type
        guard let keys = filter.requiredKeys, keys.allSatisfy({ InMemoryIndex<Int>.decidesEquality($0, in: type) }) else {
            return nil
        }
        let numbers = type.numberClass
        var seen = Set<DatabaseValue>(minimumCapacity: keys.count)
        return keys.map { $0.normalized(numbers) }.filter { !$0.isNull && seen.insert($0).inserted }
    }

    /// The saved copies that match the full-text conditions of the filter's top-level AND
    /// (``ResolvedFilter/requiredFullText``), as the full-text index lists them, and what is left
    /// of the filter to evaluate on them (nil: nothing); nil when the index does not apply. The
    /// conditions are one: a row matches all of them when it matches every term of each, and
    /// none when one has no term.
    func fullTextCandidates(_ filter: ResolvedFilter) -> (slots: [Int], rest: ResolvedFilter?)? {
        guard let fullText else { return nil }
        let required = filter.requiredFullText
        guard !required.isEmpty else { return nil }
        let slots = fullText.slots(matching: required.contains(where: \.isEmpty) ? [] : required.flatMap { $0 })
        return (slots, filter.withoutRequiredFullText)
    }

    /// The keys of the objects a filter has to be evaluated on (see ``candidates(_:)``).
    func candidateKeys(_ filter: ResolvedFilter) throws -> [DatabaseValue] {
        let candidates = try candidates(filter)
        return candidates.slots.map(saved.key(at:)) + candidates.edited
    }

    /// How many objects the context shows match a query (its window applied), without building
    /// values or sorting: straight from an in-memory index when the filter is exactly equalities
    /// on an index's leading attributes and nothing is being edited, else by evaluating the
    /// filter on the candidates.
    func count(_ resolved: ResolvedQuery) throws -> Int {
        if edits.isEmpty, let equalities = resolved.filter.equalitiesOnly, try indexesApply(to: equalities),
           let total = exactIndexCount(equalities) {
            return resolved.windowCount(total)
        }
        let candidates = try candidates(resolved.filter)
        var total = 0
        for slot in candidates.slots where candidates.admits(saved.rowView(at: slot), resolved.filter) { total += 1 }
        for key in candidates.edited where edits[key]?.row.map(resolved.filter.matches) == true { total += 1 }
        return resolved.windowCount(total)
    }

    /// The fewest candidates an index gives for the filter's equalities, and whether they are
    /// exactly the filter's matches (the filter is nothing but equalities on a prefix of that
    /// index's attributes, none with NULL: ``InMemoryIndex/count(exactly:)``'s case).
    func indexedCandidates(_ filter: ResolvedFilter) throws -> (slots: [Int], exact: Bool)? {
        let equalities = filter.requiredEqualities
        guard try indexesApply(to: equalities) else { return nil }
        if let exactly = filter.equalitiesOnly, !exactly.values.contains(where: \.isNull) {
            if let slots = indexes.lazy.compactMap({ $0.count(exactly: exactly) == nil ? nil : $0.candidates(exactly) }).first {
                return (slots, true)
            }
            if ordered?.answersExactly(exactly) == true, let run = orderedRun(exactly) { return (Array(run), true) }
        }
        let hashed = indexes.lazy.compactMap { $0.candidates(equalities) }.min { $0.count < $1.count }
        guard let run = orderedRun(equalities), run.count < hashed?.count ?? .max else { return hashed.map { ($0, false) } }
        return (Array(run), false)
    }

    /// Whether in-memory indexes may look up `equalities`: the entity has some (declared, or its
    /// snapshot order's), and each comparison is a plain lookup in SQL
    /// (``InMemoryIndex/decidesEquality(_:in:)``). Builds the indexes first when they are.
    private func indexesApply(to equalities: [Int: DatabaseValue]) throws -> Bool {
        guard !equalities.isEmpty, !schema.indexes.isEmpty || ordered != nil,
              equalities.allSatisfy({ InMemoryIndex<Int>.decidesEquality($0.value, in: schema.attributes[$0.key].type) })
        else { return false }
        try enableIndexes()
        return true
    }

    /// How many saved copies match exactly `equalities` (the whole filter) when one index answers
    /// them alone: a hash index on those attributes, or the snapshot order's index on them.
    private func exactIndexCount(_ equalities: [Int: DatabaseValue]) -> Int? {
        if let total = indexes.lazy.compactMap({ $0.count(exactly: equalities) }).first { return total }
        guard ordered?.answersExactly(equalities) == true else { return nil }
        // NULL equals nothing in SQL.
        return equalities.values.contains(where: \.isNull) ? 0 : orderedRun(equalities)?.count
    }

    /// The saved copies whose leading snapshot-order attributes equal `equalities`' values (the
    /// longest run of them the equalities pin), or nil when they pin none.
    private func orderedRun(_ equalities: [Int: DatabaseValue]) -> ArraySlice<Int>? {
        guard let prefix = ordered?.pinnedPrefix(equalities), prefix > 0 else { return nil }
        settleOrder()
        return ordered?.equalRun(equalities, prefix: prefix, in: saved)
    }
}
