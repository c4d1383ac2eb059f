/// Posting many rows at once — every row of a block (a warm start's, a cold start's), or the new
/// rows a merge just stored in a table: rows are grouped by their key cells level by level,
/// hashed over the cells' bytes (``KeyHash``, ``KeyProbe``) with no `DatabaseValue` made per row,
/// and each level's new postings are listed in one array (``RowGroups``), a slice of it per key.
/// A key's values are made once, from its first row, for the map entry.
extension InMemoryIndex where ID == Int {
    /// The index on the attributes at `positions` of `schema`, over every row of `block` (the
    /// postings are row numbers). Answers as an index built by ``insert(_:row:fromLevel:)`` row
    /// by row would: keys normalized the same way, each row posted once per level.
    static func built(positions: [Int], schema: EntitySchema, over block: ColumnBlock) -> Self {
        var index = Self(positions: positions, schema: schema)
        guard block.count > 0 else { return index }
        block.arena.withUnsafeBytes { arena in
            group(0..<block.count, positions: positions, numberClasses: index.numberClasses, columns: block.columns,
                  arena: arena) { level, groups, firstRows in
                var map: [Key: Postings] = [:]
                map.reserveCapacity(firstRows.count)
                for (group, first) in firstRows.enumerated() {
                    let key = index.key(level: level) { block.value(at: first, $0) }
                    let rows = groups[group]
                    map[key] = rows.count == 1 ? .one(first) : .listed(rows)
                }
                index.setMap(map, level: level)
            }
        }
        return index
    }

    /// Posts `slots` — rows `table` has just stored in slots no index posts yet — as
    /// ``insertNew(_:row:)`` would one by one, one map entry changed per distinct key: a merge of
    /// 10,000 new articles hashes each one's cells, not a `DatabaseValue` key per row and level.
    mutating func insertNew(_ slots: [Int], of table: ColumnTable) {
        guard !slots.isEmpty else { return }
        table.withCells { columns, arena in
            Self.group(slots, positions: positions, numberClasses: numberClasses, columns: columns,
                       arena: arena) { level, groups, firstSlots in
                for (group, first) in firstSlots.enumerated() {
                    addNew(groups[group], level: level, key: key(level: level) { table.value(at: first, $0) })
                }
            }
        }
    }

    /// Groups `rows` (row numbers or slots of `columns`) by their keys, level by level, and calls
    /// `post` with each level, the rows of each group (in `rows`' order: ``RowGroups``) and each
    /// group's first row. A group at one level is a group at the previous level split by one more
    /// cell. Groups are numbered in the order of their first rows, whether a level is grouped by a
    /// table (``denseGroups(_:column:numbers:previous:parents:into:)``) or by hashing.
    private static func group<Rows: RandomAccessCollection<Int>>(
        _ rows: Rows, positions: [Int], numberClasses: [NumberClass], columns: [Column], arena: some CellBytes,
        post: (_ level: Int, _ groups: RowGroups, _ firstRows: [Int]) -> Void
    ) where Rows.Index == Int {
        // Rows are read by their place (a block's every row stays a range, not an array made of it).
        precondition(rows.startIndex == 0, "rows to group are numbered from 0")
        // Per row (by its place in `rows`), its group at the previous level; level 0 has one group.
        var previous = FreshMemory.array(repeating: Int32(0), count: rows.count)
        var current = FreshMemory.array(repeating: Int32(0), count: rows.count)
        var parents = 1
        for level in positions.indices {
            let column = columns[positions[level]]
            let numbers = numberClasses[level]
            defer { swap(&previous, &current) }
            if let firstPlaces = denseGroups(rows, column: column, numbers: numbers, previous: previous, parents: parents,
                                             into: &current) {
                post(level, RowGroups(rows, groupOf: current, groups: firstPlaces.count), firstPlaces.map { rows[$0] })
                parents = firstPlaces.count
                continue
            }
            var hashes = KeyHash(capacity: 16)
            var firstPlaces: [Int] = []   // per group, the place of its first row
            for place in rows.indices {
                column.withProbe(at: rows[place], arena: arena) { raw in
                    let probe = raw.normalized(numbers)
                    let parent = previous[place]
                    let hash = probe.hash ^ (UInt32(bitPattern: parent) &* 0x9E37_79B1)
                    let found = hashes.find(hash) { first in
                        previous[first] == parent
                            && column.withProbe(at: rows[first], arena: arena) { $0.normalized(numbers).matches(probe) }
                    }
                    if let found {
                        current[place] = current[found]
                    } else {
                        current[place] = Int32(firstPlaces.count)
                        hashes.insert(hash, slot: place)
                        firstPlaces.append(place)
                    }
                }
            }
            post(level, RowGroups(rows, groupOf: current, groups: firstPlaces.count), firstPlaces.map { rows[$0] })
            parents = firstPlaces.count
        }
    }

    /// The most entries of ``denseGroups(_:column:numbers:previous:parents:into:)``'s table
    /// beyond one per row.
    private static let denseTableLimit = 1 << 16

    /// Groups one level without hashing when every cell of `column` at `rows` is an integer (a
    /// flag, a small ID) and the values span a small range: a row's group is found in a table
    /// indexed by its group at the previous level (of `parents`) and its value's offset from the
    /// smallest. Sets `current` per place and returns each group's first place, as the hashed
    /// path does; nil, changing nothing, when the level does not qualify (a text, real or NULL
    /// cell; numbers of a REAL attribute, which key as reals; a wide range).
    private static func denseGroups<Rows: RandomAccessCollection<Int>>(
        _ rows: Rows, column: Column, numbers: NumberClass, previous: [Int32], parents: Int, into current: inout [Int32]
    ) -> [Int]? where Rows.Index == Int {
        guard numbers != .real, !rows.isEmpty else { return nil }
        if rows.count == column.tags.count, rows.first == 0, rows.last == rows.count - 1 {
            return denseGroupsOfEveryRow(column: column, previous: previous, parents: parents, into: &current)
        }
        var low = Int64.max, high = Int64.min
        for row in rows {
            guard column.tags[row] == CellTag.integer else { return nil }
            let value = Int64(bitPattern: column.payloads[row])
            low = min(low, value)
            high = max(high, value)
        }
        guard let (width, entries) = denseTable(low: low, high: high, parents: parents, rows: rows.count) else { return nil }
        var groupOf = [Int32](repeating: -1, count: entries)
        var firstPlaces: [Int] = []
        for place in rows.indices {
            let entry = Int(previous[place]) * width + Int(Int64(bitPattern: column.payloads[rows[place]]) &- low)
            if groupOf[entry] < 0 {
                groupOf[entry] = Int32(firstPlaces.count)
                firstPlaces.append(place)
            }
            current[place] = groupOf[entry]
        }
        return firstPlaces
    }

    /// A dense level's table for values from `low` to `high` under `parents` groups of `rows`
    /// rows: the values' width and the table's entries (one per group and value), or nil when
    /// the range is too wide for a table.
    private static func denseTable(low: Int64, high: Int64, parents: Int, rows: Int) -> (width: Int, entries: Int)? {
        let (span, overflow) = high.subtractingReportingOverflow(low)
        guard !overflow, span < denseTableLimit else { return nil }
        let width = Int(span) + 1
        let (entries, tooMany) = parents.multipliedReportingOverflow(by: width)
        guard !tooMany, entries <= max(denseTableLimit, rows) else { return nil }
        return (width, entries)
    }

    /// ``denseGroups(_:column:numbers:previous:parents:into:)`` when the rows are every row of
    /// `column`, in order (a block's, built over at a warm or cold start): the cells read a page
    /// at a time.
    private static func denseGroupsOfEveryRow(column: Column, previous: [Int32], parents: Int,
                                              into current: inout [Int32]) -> [Int]? {
        var integers = true
        column.tags.forEachPart { part in
            if integers { integers = !part.contains { $0 != CellTag.integer } }
        }
        guard integers else { return nil }
        var low = Int64.max, high = Int64.min
        column.payloads.forEachPart { part in
            for payload in part {
                let value = Int64(bitPattern: payload)
                low = min(low, value)
                high = max(high, value)
            }
        }
        guard let (width, entries) = denseTable(low: low, high: high, parents: parents, rows: previous.count) else {
            return nil
        }
        var groupOf = [Int32](repeating: -1, count: entries)
        var firstPlaces: [Int] = []
        previous.withUnsafeBufferPointer { previous in
            current.withUnsafeMutableBufferPointer { current in
                groupOf.withUnsafeMutableBufferPointer { groupOf in
                    var place = 0
                    column.payloads.forEachPart { part in
                        for payload in part {
                            let entry = Int(previous[place]) * width + Int(Int64(bitPattern: payload) &- low)
                            if groupOf[entry] < 0 {
                                groupOf[entry] = Int32(firstPlaces.count)
                                firstPlaces.append(place)
                            }
                            current[place] = groupOf[entry]
                            place += 1
                        }
                    }
                }
            }
        }
        return firstPlaces
    }
}

