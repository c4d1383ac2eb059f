import Foundation

/// Compares the rows of one ``ColumnTable`` or ``ColumnBlock`` in an order — sort attributes with
/// their directions, then the primary key ascending, as SQL's `ORDER BY` breaks ties — reading
/// the cells in place: no ``DatabaseValue`` is built, so a text key costs a `memcmp`, not two
/// `String`s.
///
/// A snapshot of the rows' storage (its arrays are copy-on-write values): valid for the rows
/// held when it was made.
struct RowOrder<Arena: CellBytes> {
    let columns: [Column]
    let arena: Arena
    let sort: [(position: Int, ascending: Bool)]
    let keyPosition: Int

    /// The rows `rows` (slots, or a block's row numbers) in this order.
    func sorted(_ rows: [Int]) -> [Int] { rows.sorted { precedes($0, $1) } }

    /// Whether rows `0..<count` (a block's rows, or a table's first slots) already come in this
    /// order, each before the next: what a snapshot archived in this order holds, checked in one
    /// pass instead of sorted. Where the first sort attribute's cells are all integers or all
    /// reals (a date, a count), neighbours are compared a page at a time, and
    /// ``precedes(_:_:)`` is asked only of those that tie there: the generic comparison reads
    /// two tags and two payloads through the paged arrays per row, the page at a time reads a
    /// plain buffer.
    func holdsInOrder(_ count: Int) -> Bool {
        guard count > 1 else { return true }
        if let first = sort.first,
           let inOrder = columns[first.position].numbersInOrder(count, ascending: first.ascending,
                                                                 tie: { precedes($0 - 1, $0) }) {
            return inOrder
        }
        for row in 1..<count where !precedes(row - 1, row) { return false }
        return true
    }

    /// Whether the row in slot `a` comes before the row in slot `b`.
    func precedes(_ a: Int, _ b: Int) -> Bool {
        var index = 0
        while index < sort.count {
            let order = columns[sort[index].position].compare(a, b, arena: arena)
            if order != 0 { return sort[index].ascending ? order < 0 : order > 0 }
            index += 1
        }
        return columns[keyPosition].compare(a, b, arena: arena) < 0
    }

    /// The first index at or after `start` whose slot does not come before `slot`, in `slots`
    /// (ordered): a galloping search, so it costs O(log d) comparisons where d is the distance
    /// from `start` — placing changes that cluster (new rows at the head of the order) costs a
    /// comparison or two each.
    func boundary(of slot: Int, in slots: [Int], from start: Int) -> Int {
        // Every slot before `low` comes before `slot`; `slots[high]`, if any, does not.
        var low = start, high = start, step = 1
        while high < slots.count, precedes(slots[high], slot) {
            low = high + 1
            high = low + step
            step *= 2
        }
        high = min(high, slots.count)
        while low < high {
            let middle = (low + high) / 2
            if precedes(slots[middle], slot) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

extension Column {
    /// Compares the cells at slots `a` and `b` exactly as ``DatabaseValue/compare(_:_:)`` compares
    /// their values (SQLite's BINARY collation: NULL first, numbers by value across integers and
    /// reals, text and blobs byte by byte), their bytes read from `arena`.
    ///
    /// Always inlined: called, its specialization for a table's arena copies the whole
    /// ``RowOrder`` (its arrays and arena retained, then released) at every call, three per
    /// comparison of two rows.
    @inline(__always)
    func compare(_ a: Int, _ b: Int, arena: some CellBytes) -> Int {
        let left = tags[a], right = tags[b]
        if left == CellTag.integer, right == CellTag.integer {
            let x = Int64(bitPattern: payloads[a]), y = Int64(bitPattern: payloads[b])
            return x < y ? -1 : (x == y ? 0 : 1)
        }
        if left == CellTag.real, right == CellTag.real {
            let x = Double(bitPattern: payloads[a]), y = Double(bitPattern: payloads[b])
            return x < y ? -1 : (x == y ? 0 : 1)
        }
        if left == CellTag.integer, right == CellTag.real {
            return -DatabaseValue.compareReal(Double(bitPattern: payloads[b]), withInteger: Int64(bitPattern: payloads[a]))
        }
        if left == CellTag.real, right == CellTag.integer {
            return DatabaseValue.compareReal(Double(bitPattern: payloads[a]), withInteger: Int64(bitPattern: payloads[b]))
        }
        if left == right, left >= CellTag.text {
            let xCount = Int(lengths[a]), yCount = Int(lengths[b]), common = min(xCount, yCount)
            let order = common == 0 ? 0 : arena.withCellBytes(payloads[a], count: common) { x in
                arena.withCellBytes(payloads[b], count: common) { y in memcmp(x.baseAddress!, y.baseAddress!, common) }
            }
            if order != 0 { return order < 0 ? -1 : 1 }
            return xCount == yCount ? 0 : (xCount < yCount ? -1 : 1)
        }
        return StorageClass.rank(ofTag: left) - StorageClass.rank(ofTag: right)
    }

    /// Whether cells `0..<count` — nil unless every one is an integer, or every one a real —
    /// never decrease (`ascending`) or never increase along the rows, read a page at a time;
    /// `tie(row)` says whether row `row`, equal here to the row before it, is in order (by the
    /// next attributes).
    func numbersInOrder(_ count: Int, ascending: Bool, tie: (Int) -> Bool) -> Bool? {
        guard count <= tags.count, count > 0 else { return nil }
        let tag = tags[0]
        guard tag == CellTag.integer || tag == CellTag.real else { return nil }
        var uniform = true, seen = 0
        tags.forEachPart { part in
            let part = UnsafeBufferPointer(rebasing: part.prefix(count - seen))
            seen += part.count
            if uniform { uniform = !part.contains { $0 != tag } }
        }
        guard uniform else { return nil }
        var inOrder = true, row = 0, previous = payloads[0]
        payloads.forEachPart { part in
            guard inOrder else { return }
            for payload in part.prefix(count - row) {
                if row > 0 {
                    let order: Int
                    if tag == CellTag.integer {
                        let x = Int64(bitPattern: previous), y = Int64(bitPattern: payload)
                        order = x < y ? -1 : (x == y ? 0 : 1)
                    } else {
                        let x = Double(bitPattern: previous), y = Double(bitPattern: payload)
                        order = x < y ? -1 : (x == y ? 0 : 1)
                    }
                    if order == 0 ? !tie(row) : (order < 0) != ascending {
                        inOrder = false
                        return
                    }
                }
                previous = payload
                row += 1
            }
        }
        return inOrder
    }
}
