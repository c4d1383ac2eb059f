/// Building an index over a whole block (a warm start's, a cold start's): rows are grouped by
/// their key cells level by level, hashed over the cells' bytes (``KeyHash``, ``KeyProbe``) with
/// no `DatabaseValue` made per row, and each key's postings are listed in one array. A key's
/// values are made once, from its first row, for the map entry.
extension InMemoryIndex where ID == Int {
    /// The index on the attributes at `positions` of `schema`, over every row of `block` (the
    /// postings are row numbers). Answers as an index built by ``insert(_:row:fromLevel:)`` row
    /// by row would: keys normalized the same way, each row posted once per level.
    static func built(positions: [Int], schema: EntitySchema, over block: ColumnBlock) -> Self {
        var index = Self(positions: positions, schema: schema)
        let rows = block.count
        guard rows > 0 else { return index }
        // Per row, its group (distinct key) at the previous level; level 0 has one group.
        var previous = [Int32](repeating: 0, count: rows)
        var current = [Int32](repeating: 0, count: rows)
        for level in positions.indices {
            let column = block.columns[positions[level]]
            let numbers = index.numberClasses[level]
            var groups = KeyHash(capacity: 16)
            var firstRows: [Int] = []   // per group, its first row
            block.arena.withUnsafeBytes { arena in
                for row in 0..<rows {
                    let probe = column.probe(at: row, arena: arena).normalized(numbers)
                    let parent = previous[row]
                    let hash = probe.hash ^ (UInt32(bitPattern: parent) &* 0x9E37_79B1)
                    let found = groups.find(hash) { first in
                        previous[first] == parent && column.probe(at: first, arena: arena).normalized(numbers).matches(probe)
                    }
                    if let found {
                        current[row] = current[found]
                    } else {
                        current[row] = Int32(firstRows.count)
                        groups.insert(hash, slot: row)
                        firstRows.append(row)
                    }
                }
            }
            index.setPostings(level: level, firstRows: firstRows, groupOf: current, block: block)
            swap(&previous, &current)
        }
        return index
    }

    /// Fills level `level`'s map: one entry per group, keyed by its first row's values, posting
    /// the group's rows in order.
    private mutating func setPostings(level: Int, firstRows: [Int], groupOf: [Int32], block: ColumnBlock) {
        // Rows grouped by a counting sort into one array; a list is made only for a group of
        // several rows (a nearly unique attribute, a date, has mostly groups of one).
        var ends = [Int](repeating: 0, count: firstRows.count + 1)
        for group in groupOf { ends[Int(group) + 1] += 1 }
        for group in firstRows.indices { ends[group + 1] += ends[group] }
        var next = ends
        var grouped = [Int](repeating: 0, count: groupOf.count)
        for (row, group) in groupOf.enumerated() {
            grouped[next[Int(group)]] = row
            next[Int(group)] += 1
        }
        var map: [Key: Postings] = [:]
        map.reserveCapacity(firstRows.count)
        for (group, first) in firstRows.enumerated() {
            var key: Key?
            for position in positions.prefix(level + 1).indices {
                let value = Self.normalized(block.value(at: first, positions[position]), numberClasses[position])
                if key == nil { key = Key(value) } else { key!.append(value) }
            }
            let rows = ends[group]..<ends[group + 1]
            map[key!] = rows.count == 1 ? .one(first) : .listed(Array(grouped[rows]))
        }
        setMap(map, level: level)
    }
}

extension KeyProbe {
    /// The probe as ``InMemoryIndex/normalized(_:_:)`` makes its value: numbers take their
    /// attribute's class, so that `1` and `1.0` are one key where SQLite equates them.
    func normalized(_ numbers: InMemoryIndex<Int>.NumberClass) -> KeyProbe {
        switch (numbers, tag) {
        case (.integer, CellTag.real):
            guard let integer = Int64(exactly: Double(bitPattern: payload)) else { return self }
            return KeyProbe(tag: CellTag.integer, payload: UInt64(bitPattern: integer))
        case (.real, CellTag.integer):
            return KeyProbe(tag: CellTag.real, payload: Double(Int64(bitPattern: payload)).bitPattern)
        default:
            return self
        }
    }

    /// Whether `other` holds this probe's value.
    func matches(_ other: KeyProbe) -> Bool { matches(tag: other.tag, payload: other.payload, bytes: other.bytes) }
}
