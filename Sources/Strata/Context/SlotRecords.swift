/// What the context engine keeps per slot of a table's saved copies beside the row (a
/// ``ColumnTable`` holds rows only): the store version the row reflects, the version of the copy
/// last handed out (0: never) and its last use on the table's clock (0: never).
///
/// ``EntityTable`` keeps the records in step with the slots it claims and writes: a claimed slot
/// starts afresh (``claim(_:)``), a written row takes its version, new rows written together take
/// theirs a page at a time (``wroteNew(at:version:firstUse:)``). The records may be longer than the
/// table's slot list (a table drops unclaimed slots at its end; their records wait for the next
/// claim). Each part is a ``PagedArray``, so a copy of a table — a merge prepared off the main
/// actor — shares them until either side writes.
struct SlotRecords {
    private var versions = PagedArray<UInt64>()
    private var readVersions = PagedArray<UInt64>()
    /// Per slot, its last use: what a value cache evicts by (``ValueCache``).
    private(set) var lastUses = PagedArray<UInt64>()

    /// The store version the row in `slot` reflects.
    func version(at slot: Int) -> UInt64 { versions[slot] }
    mutating func setVersion(_ version: UInt64, at slot: Int) { versions[slot] = version }

    /// The version of the copy last handed out from `slot` (0: never).
    func readVersion(at slot: Int) -> UInt64 { readVersions[slot] }
    mutating func setReadVersion(_ version: UInt64, at slot: Int) { readVersions[slot] = version }

    /// When the row in `slot` was last used, on the table's clock (0: never).
    func lastUse(at slot: Int) -> UInt64 { lastUses[slot] }
    mutating func setLastUse(_ tick: UInt64, at slot: Int) { lastUses[slot] = tick }

    /// Makes room for the records of slots up to `count` (0s), in bulk: what a table does when it
    /// adds free slots for a change set's new objects.
    mutating func grow(to count: Int) {
        let added = count - versions.count
        guard added > 0 else { return }
        versions.append(repeating: 0, count: added)
        readVersions.append(repeating: 0, count: added)
        lastUses.append(repeating: 0, count: added)
    }

    /// Starts the records of `slot`, just claimed for a new key, afresh: read version and last use
    /// 0 (its version is set when its row is written).
    mutating func claim(_ slot: Int) {
        if slot >= versions.count { grow(to: slot + 1) }
        // Written only when not 0 already (a slot added in bulk is 0): each write checks that the
        // page is not shared, a read does not.
        if readVersions[slot] != 0 { readVersions[slot] = 0 }
        if lastUses[slot] != 0 { lastUses[slot] = 0 }
    }

    /// Records new rows written into `slots` (claimed, nothing else written since) at `version`,
    /// their last uses `firstUse`, `firstUse + 1`, … in order: each run of consecutive slots a
    /// page at a time (``PagedArray/update(_:_:)``: one check per page).
    mutating func wroteNew(at slots: [Int], version: UInt64, firstUse: UInt64) {
        var start = 0
        while start < slots.count {
            var end = start + 1
            while end < slots.count, slots[end] == slots[end - 1] + 1 { end += 1 }
            let run = slots[start]..<slots[start] + (end - start)
            versions.update(run) { part, _ in part.update(repeating: version) }
            lastUses.update(run) { part, from in
                for index in part.indices { part[index] = firstUse + UInt64(start + from + index) }
            }
            start = end
        }
    }

    /// The records of a table that has just taken `count` rows whole, in slots `0..<count`, at
    /// `version`: none read, none used.
    mutating func adopt(count: Int, version: UInt64) {
        versions = PagedArray(repeating: version, count: count)
        readVersions = PagedArray(repeating: 0, count: count)
        lastUses = PagedArray(repeating: 0, count: count)
    }
}
