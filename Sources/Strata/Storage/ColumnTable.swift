import Foundation

/// The saved rows of one entity, held in memory column by column: the storage engine of the
/// contexts.
///
/// Each attribute is a ``Column`` (see `Column.swift`) of fixed-width cells (a storage-class tag,
/// a 64-bit payload and a byte length), and the text and blob bytes of the whole table live in
/// one arena, in pages that copies of the table share (``PagedArena``: a copy that writes copies
/// at most one page). A row lives in a slot (an `Int`, stable while the row lives): a removed
/// row's slot goes on a free list and the next new key reuses it. A primary-key hash
/// (``KeyHash``, over the key cells' bytes) maps each key to its slot. Columns are
/// ``PagedArray``s: a copy of the table that writes copies only the pages it writes. Storing a
/// row costs no heap allocation of its own. What the context engine keeps per slot — versions,
/// reads, last uses, values built from rows — is not here: ``EntityTable`` keeps it
/// (``SlotRecords``, ``ValueCache``) beside the table.
///
/// ```swift
/// let table = ColumnTable(schema: schema)
/// let slot = table.upsert([.integer(1), .text("Hello")])
/// table.value(at: slot, 1)   // .text("Hello")
/// ```
///
/// Values come back exactly as they went in: the storage class is the value's own, whatever the
/// attribute type (an `.integer` in a REAL attribute stays an `.integer`), reals keep their bit
/// pattern (the sign of `-0.0`, a NaN's payload), text its UTF-8 bytes (NUL included, never
/// normalized).
///
/// Replacing or removing a row turns its arena bytes into garbage; when garbage exceeds both
/// ``compactionThreshold`` and the live bytes, the arena is rewritten with live bytes only.
///
/// Not thread-safe: a table is owned by one context's isolation and used only there.
final class ColumnTable {
    /// One row of the table, read cell by cell as a decoder asks for it.
    struct RowView: RowSource {
        let table: ColumnTable
        let slot: Int

        func value(at position: Int) -> DatabaseValue { table.value(at: slot, position) }
    }

    /// The garbage the arena may hold before compaction is considered (it also has to exceed the
    /// live bytes, so that compaction costs amortized O(1) per byte written).
    static let compactionThreshold = 64 * 1024

    /// The entity whose rows the table holds; rows are in its attribute order.
    let schema: EntitySchema

    // The cells and the slot bookkeeping below are `@exclusivity(unchecked)`: Swift checks each
    // access to a class's stored property at run time, several per cell and per slot of a merge
    // of new rows — a large part of its instructions. Dropping them is safe because no
    // two accesses to one of these properties can overlap: they are written only by this
    // class's methods, on the one isolation that owns the table; they hold plain data (cells,
    // bytes, integers — no app value, so no deinit of app code runs while one is accessed); and
    // no method runs code outside this file's helpers (`Column`, `PagedArray`, `PagedArena`, `KeyHash`,
    // `KeyProbe`, `RowOrder`, all of which take what they need as arguments) while an access is
    // open — `withCells(_:)` and `order(by:)` hand out copies.
    /// The number of live rows.
    @exclusivity(unchecked) private(set) var count = 0
    /// The arena bytes no live cell points at.
    @exclusivity(unchecked) private(set) var garbageByteCount = 0

    @exclusivity(unchecked) private var columns: [Column]
    @exclusivity(unchecked) private var arena = PagedArena()
    /// Key → slot, for live rows (``KeyHash``: the keys stay in their column).
    @exclusivity(unchecked) private var slots = KeyHash()
    /// Per slot: whether it holds a row. (A row's key is its primary-key cell, NULL in a free slot.)
    @exclusivity(unchecked) private var liveFlags = PagedArray<Bool>()
    /// Free slots, reused last freed first.
    @exclusivity(unchecked) private var freeSlots: [Int] = []
    /// The page of change-set cells last taken into the arena and its base (``arenaBase(for:)``),
    /// until the arena is replaced.
    @exclusivity(unchecked) private var takenPage: (page: ArenaPage, base: UInt64)?
    /// An empty table for `schema`'s rows.
    init(schema: EntitySchema) {
        self.schema = schema
        self.columns = Array(repeating: Column(), count: schema.attributes.count)
    }

    /// The arena's size in bytes: live and garbage.
    var arenaByteCount: Int { arena.count }

    /// The number of slots, free ones included.
    var slotCount: Int { liveFlags.count }

    /// The slots that hold a row, in ascending order.
    var liveSlots: [Int] { liveFlags.indices.filter { liveFlags[$0] } }

    // MARK: Reading

    /// The slot of the row whose primary key is `key`, or nil when the table has none.
    func slot(of key: DatabaseValue) -> Int? { find(key).slot }

    /// The hash of the key in `slot`.
    private func keyHash(at slot: Int) -> UInt32 {
        let keys = columns[schema.primaryKeyIndex]
        return keys.withProbe(at: slot, arena: arena) { $0.hash }
    }

    /// Whether `slot` holds a row.
    func isLive(at slot: Int) -> Bool { slot >= 0 && slot < liveFlags.count && liveFlags[slot] }

    /// The primary key of the row in `slot` (`.null` for a free slot).
    func key(at slot: Int) -> DatabaseValue { value(at: slot, schema.primaryKeyIndex) }

    /// The value of `attribute` (a position in the schema's attributes) in the row in `slot`.
    func value(at slot: Int, _ attribute: Int) -> DatabaseValue {
        // Read the cell in place: copying the column (three arrays) out of `columns` for every
        // cell a decoder or a filter reads cost a few hundred instructions per cell.
        let tag = columns[attribute].tags[slot]
        switch tag {
        case CellTag.integer: return .integer(Int64(bitPattern: columns[attribute].payloads[slot]))
        case CellTag.real: return .real(Double(bitPattern: columns[attribute].payloads[slot]))
        case CellTag.text, CellTag.blob:
            return arena.withCellBytes(columns[attribute].payloads[slot], count: Int(columns[attribute].lengths[slot])) { cell in
                tag == CellTag.text ? .text(String(decoding: cell, as: UTF8.self)) : .blob(Data(cell))
            }
        default: return .null
        }
    }

    /// The row in `slot`, in the schema's attribute order.
    func row(at slot: Int) -> [DatabaseValue] {
        // Local copies (retains, not copies): one access to each property for the whole row.
        let columns = self.columns, arena = self.arena
        var row: [DatabaseValue] = []
        row.reserveCapacity(columns.count)
        for column in columns { row.append(column.value(at: slot, arena: arena)) }
        return row
    }

    /// Compares this table's rows in `sort` (then by key), cell by cell in place (``RowOrder``),
    /// reading the arena's pages as they are (``PagedArena/filled(deferred:)``): when a sort
    /// attribute is deferred (only a query's sort can name one), every deferred page is filled
    /// first — a sort by it reads it in every row it orders. The key never is.
    func order(by sort: [(position: Int, ascending: Bool)]) -> RowOrder<PagedArena.Filled> {
        let deferred = sort.contains { schema.isDeferred($0.position) }
        return RowOrder(columns: columns, arena: arena.filled(deferred: deferred), sort: sort,
                        keyPosition: schema.primaryKeyIndex)
    }

    /// Calls `body` with the table's columns and arena as they are (retained, not copied): for
    /// reading many rows' cells in place, as grouping rows by their key cells does.
    func withCells<R>(_ body: ([Column], PagedArena) -> R) -> R {
        let columns = self.columns, arena = self.arena
        return body(columns, arena)
    }

    /// The row in `slot` as a ``RowSource`` that reads each cell only when asked.
    func rowView(at slot: Int) -> RowView { RowView(table: self, slot: slot) }

    // MARK: Writing

    /// Stores `row` under its primary key (`row[schema.primaryKeyIndex]`) and returns its slot:
    /// a key already present keeps its slot; a new key takes a free slot (or a new one).
    ///
    /// - Precondition: `row` has one value per attribute of the schema.
    @discardableResult
    func upsert(_ row: [DatabaseValue]) -> Int {
        let slot = claim(row[schema.primaryKeyIndex]).slot
        write(row, at: slot)
        return slot
    }

    /// The slot of `key`'s row, or a slot claimed for it (`isNew`: free, its cells NULL) which
    /// ``write(_:at:)`` must then fill — one hash
    /// lookup either way. Between the two the caller can still read the old row of a key present.
    func claim(_ key: DatabaseValue) -> (slot: Int, isNew: Bool) {
        let found = find(key)
        if let slot = found.slot { return (slot, false) }
        return (claim(found), true)
    }

    /// Where `key` is: its row's slot (nil when the table has none) and its hash, for
    /// ``claim(_:)`` to claim a slot with no second lookup.
    func find(_ key: DatabaseValue) -> KeyLookup {
        KeyProbe.with(key) { find($0, hash: $0.hash) }
    }

    /// Where the key `probe` holds (whose hash is `hash`) is: ``find(_:)``'s answer.
    private func find(_ probe: KeyProbe, hash: UInt32) -> KeyLookup {
        let keys = columns[schema.primaryKeyIndex]
        let (slot, bucket) = slots.locate(hash) { keys.holds(probe, at: $0, arena: arena) }
        return KeyLookup(slot: slot, hash: hash, bucket: bucket)
    }

    /// What ``find(_:)`` found for a key.
    struct KeyLookup {
        let slot: Int?
        let hash: UInt32
        /// Where the key hash's probe ended (``KeyHash/locate(_:where:)``): the bucket a claim fills.
        let bucket: Int
    }

    /// A slot claimed for a key ``find(_:)`` has just found absent (nothing written since), as
    /// ``claim(_:)`` claims one, without looking the key up again.
    func claim(_ absent: KeyLookup) -> Int {
        precondition(absent.slot == nil, "a key of \(schema.name) claimed while it has a slot")
        let slot = freeSlots.last ?? liveFlags.count
        if freeSlots.isEmpty { appendSlot() } else { freeSlots.removeLast() }
        slots.insert(absent.hash, slot: slot, at: absent.bucket)
        liveFlags[slot] = true
        count += 1
        return slot
    }

    /// Writes `row` into `slot`, which holds its key (``claim(_:)``).
    /// - Precondition: `row` has one value per attribute of the schema.
    func write(_ row: [DatabaseValue], at slot: Int) {
        precondition(row.count == columns.count,
                     "a row of \(schema.name) has \(columns.count) values, not \(row.count)")
        garbageByteCount += Self.write(row, at: slot, into: &columns, arena: &arena)
        assert(self.slot(of: row[schema.primaryKeyIndex]) == slot, "a row of \(schema.name) written into another key's slot")
        compactIfNeeded()
    }

    /// Where row `row` of `cells` would go: its key's slot (nil when the table has none) and its
    /// hash, as ``find(_:)`` finds a key — the hash made with the cells, the bytes compared in
    /// place.
    func find(_ cells: CellRows, row: Int) -> KeyLookup {
        find(cells.probe(ofRow: row), hash: cells.keyHashes[row])
    }

    /// What turns an offset into `cells`' page into the payload of a cell of this table holding
    /// the same bytes (``PagedArena/take(_:)``): the page is taken on the first call for it, and
    /// again only after the arena was replaced (a compaction keeps none of it that no cell points
    /// at). Its bytes count as garbage until ``writeNew(_:rows:at:base:)``
    /// writes the rows holding them.
    func arenaBase(for cells: CellRows) -> UInt64 {
        if let taken = takenPage, taken.page === cells.page { return taken.base }
        let base = arena.take(cells.page)
        garbageByteCount += cells.page.used
        takenPage = (cells.page, base)
        return base
    }

    /// A slot claimed for row `row` of `cells`, whose key ``find(_:row:)`` has just found absent,
    /// as ``claim(_:)`` claims one, its cells NULL until ``writeNew(_:rows:at:base:)``
    /// writes the row: how a merge takes many new rows, then writes them column by column.
    ///
    /// Meanwhile a later row of `cells` with the same key must find this slot (``find(_:)``
    /// compares key cells), so the key cell is written now (its bytes at `base`, from
    /// ``arenaBase(for:)``) — unless the cells' keys are distinct and none is NULL
    /// (``CellRows/keysAreDistinct``): then no row of them can be this key, a NULL key cell never
    /// matches a probe of theirs, and the key column is written with the others.
    func claimNew(_ absent: KeyLookup, cells: CellRows, row: Int, base: UInt64) -> Int {
        let slot = claim(absent)
        if !cells.keysAreDistinct {
            let key = schema.primaryKeyIndex
            let tag = cells.tags[key][row]
            _ = columns[key].replace(at: slot, tag: tag, payload: CellTag.rebased(cells.payloads[key][row], tag: tag, by: base),
                                     length: cells.lengths[key][row])
        }
        return slot
    }

    /// Writes rows `rows` of `cells` into `slots` — claimed by ``claimNew(_:cells:row:base:)``
    /// for their keys with the same `base`, nothing else written to them since: for each run of
    /// consecutive slots taking consecutive rows (an import's new rows are one run), each column
    /// is written a page at a time (``PagedArray/update(_:_:)``: one check per page), cells
    /// copied, text and blob payloads moved by `base`.
    /// - Precondition: `cells` has one column per attribute of the schema.
    func writeNew(_ cells: CellRows, rows: [Int], at slots: [Int], base: UInt64) {
        precondition(rows.count == slots.count, "\(rows.count) rows of \(schema.name) for \(slots.count) slots")
        precondition(cells.attributeCount == columns.count,
                     "rows of \(schema.name) with \(cells.attributeCount) values, not \(columns.count)")
        // The key cells too, when claiming them wrote none.
        let skipped = cells.keysAreDistinct ? -1 : schema.primaryKeyIndex
        var written = 0
        for row in rows { written += cells.byteCount(ofRow: row) }
        garbageByteCount -= written
        var start = 0
        while start < slots.count {
            var end = start + 1
            while end < slots.count, slots[end] == slots[end - 1] + 1, rows[end] == rows[end - 1] + 1 { end += 1 }
            let slotRun = slots[start]..<slots[start] + (end - start), rowRun = rows[start]..<rows[start] + (end - start)
            for attribute in columns.indices where attribute != skipped {
                columns[attribute].copyNew(cells, attribute, rows: rowRun, at: slotRun, base: base)
            }
            start = end
        }
        assert(zip(rows, slots).allSatisfy { find(cells, row: $0).slot == $1 },
               "a row of \(schema.name) written into another key's slot")
        compactIfNeeded()
    }

    /// Makes room for `additional` more rows than the table has slots: the key hash rehashes at
    /// most once for a save of 10,000 new objects, and a small table's lone first page grows once
    /// (later pages are made as they are reached, ``PagedArray``).
    func reserveCapacity(forAdditional additional: Int) {
        let capacity = liveFlags.count + additional
        for attribute in columns.indices { columns[attribute].reserveCapacity(capacity) }
        liveFlags.reserveCapacity(capacity)
        slots.reserveCapacity(count + additional)
    }

    /// Makes sure `count` new keys find a free slot — adding what the free list lacks at the end
    /// (``addFreeSlots(_:)``) — and returns the first slot it added (the slot count when it added
    /// none), for ``dropFreeSlots(from:)`` to give back what was not claimed.
    func provideFreeSlots(_ count: Int) -> Int {
        let first = liveFlags.count
        addFreeSlots(count - freeSlots.count)
        return first
    }

    /// Drops the free slots at the end of the table from `first` on (what
    /// ``provideFreeSlots(_:)`` added and no key claimed): a merge that reserved a slot for each
    /// of its saves, some of them updates, leaves no empty slots behind.
    func dropFreeSlots(from first: Int) {
        var end = liveFlags.count
        while end > first, !liveFlags[end - 1] { end -= 1 }
        let dropped = liveFlags.count - end
        guard dropped > 0 else { return }
        // A free slot's cells are NULL: no arena bytes to account for.
        for attribute in columns.indices { columns[attribute].removeLast(dropped) }
        liveFlags.removeLast(dropped)
        freeSlots.removeAll { $0 >= end }
    }

    /// Adds `additional` free slots at the end — NULL cells, no row — in bulk, so that as many new
    /// keys claim them without growing every column and bookkeeping array one cell at a time;
    /// they are claimed lowest first, before the slots freed earlier.
    func addFreeSlots(_ additional: Int) {
        guard additional > 0 else { return }
        reserveCapacity(forAdditional: additional)
        let first = liveFlags.count
        for attribute in columns.indices { columns[attribute].appendNulls(additional) }
        liveFlags.append(repeating: false, count: additional)
        freeSlots.append(contentsOf: (first..<first + additional).reversed())
    }

    /// Replaces one cell of the row in `slot` (not its key): how a bulk update patches a held
    /// row without rewriting the others.
    func setValue(_ value: DatabaseValue, at slot: Int, _ attribute: Int) {
        precondition(attribute != schema.primaryKeyIndex, "a row's key is not patched in place")
        let (tag, payload, length) = Column.cell(value, arena: &arena)
        garbageByteCount += columns[attribute].replace(at: slot, tag: tag, payload: payload, length: length)
        compactIfNeeded()
    }

    /// Whether the cell of `attribute` in `slot` holds `value` (``DatabaseValue`` equality),
    /// compared in place: text and blobs against the arena's bytes, no value built.
    func cellEquals(_ value: DatabaseValue, at slot: Int, _ attribute: Int) -> Bool {
        let column = columns[attribute]
        let tag = column.tags[slot], payload = column.payloads[slot]
        switch value {
        case .null: return tag == CellTag.null
        case .integer(let integer): return tag == CellTag.integer && Int64(bitPattern: payload) == integer
        case .real(let real): return tag == CellTag.real && Double(bitPattern: payload) == real
        case .text(var text):
            guard tag == CellTag.text, Int(column.lengths[slot]) == text.utf8.count else { return false }
            return text.withUTF8 { bytesEqual(UnsafeRawBufferPointer($0), at: payload) }
        case .blob(let data):
            guard tag == CellTag.blob, Int(column.lengths[slot]) == data.count else { return false }
            return data.withUnsafeBytes { bytesEqual($0, at: payload) }
        }
    }

    private func bytesEqual(_ bytes: UnsafeRawBufferPointer, at payload: UInt64) -> Bool {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return true }
        return arena.withCellBytes(payload, count: bytes.count) { memcmp($0.baseAddress!, base, bytes.count) == 0 }
    }

    /// Removes the row in `slot`, which must hold one, and frees the slot.
    func remove(at slot: Int) {
        precondition(isLive(at: slot), "slot \(slot) of \(schema.name) holds no row")
        slots.remove(keyHash(at: slot), slot: slot)
        free(slot)
    }

    /// Removes the row whose primary key is `key`, and returns the slot it freed (nil when the
    /// table had no such row).
    @discardableResult
    func remove(key: DatabaseValue) -> Int? {
        let found = find(key)
        guard let slot = found.slot else { return nil }
        slots.remove(found.hash, slot: slot)
        free(slot)
        return slot
    }

    /// Empties `slot`, whose key has left the hash, and puts it on the free list.
    private func free(_ slot: Int) {
        garbageByteCount += Self.clear(at: slot, in: &columns)
        liveFlags[slot] = false
        freeSlots.append(slot)
        count -= 1
        compactIfNeeded()
    }

    /// A table holding the same rows that shares their storage until either table is written:
    /// every part is a copy-on-write value, so the copy costs a few retains and each part is
    /// copied by whichever table writes it first. What a merge prepared off the main actor writes
    /// to while the main context keeps reading this one.
    func copy() -> ColumnTable {
        let copy = ColumnTable(schema: schema)
        copy.count = count
        copy.garbageByteCount = garbageByteCount
        copy.columns = columns
        copy.arena = arena
        copy.slots = slots
        copy.liveFlags = liveFlags
        copy.freeSlots = freeSlots
        return copy
    }

    /// Removes every row and releases the table's memory.
    func removeAll() {
        columns = Array(repeating: Column(), count: columns.count)
        arena = PagedArena()
        takenPage = nil
        slots.removeAll()
        liveFlags.removeAll()
        freeSlots = []
        count = 0
        garbageByteCount = 0
    }

    // MARK: Blocks

    /// Takes `block`'s rows. An empty table takes the block's storage as it is
    /// (no cell is copied, no key hashed again); otherwise each row is upserted.
    func adopt(_ block: consuming ColumnBlock) {
        guard count == 0 else {
            for row in 0..<block.count { upsert(block.row(at: row)) }
            return
        }
        let rows = block.count
        let parts = block.parts()
        // The block's arena becomes the first page, its offsets the payloads as they are; its
        // deferred pages the next ones, numbered as its cells number them.
        guard let adopted = PagedArena(adopting: parts.arena, deferred: parts.deferred) else {
            let block = ColumnBlock(schema: schema, count: rows, columns: parts.columns, arena: parts.arena,
                                    deferred: parts.deferred)
            for row in 0..<rows { upsert(block.row(at: row)) }
            return
        }
        columns = parts.columns
        arena = adopted
        takenPage = nil
        slots = parts.keyIndex
        liveFlags = PagedArray(repeating: true, count: rows)
        freeSlots = []
        count = rows
        garbageByteCount = 0
    }

    /// How many of the arena's deferred pages have been filled (read), of how many.
    var deferredPages: (filled: Int, total: Int) { arena.deferredPages }

    /// The rows in `slots`, in that order, as a block with an arena of their own (keys not
    /// indexed): what a snapshot archives.
    func block(_ slots: some Collection<Int>) -> ColumnBlock {
        var columns = Array(repeating: Column(), count: self.columns.count)
        var arena: [UInt8] = []
        let source = self.arena
        for attribute in columns.indices {
            let from = self.columns[attribute]
            // NULL cells first, then each written in place: fresh pages, no check per cell.
            var column = Column()
            column.appendNulls(slots.count)
            for (row, slot) in slots.enumerated() {
                let tag = from.tags[slot], length = from.lengths[slot]
                var payload = from.payloads[slot]
                if tag >= CellTag.text {
                    payload = source.withCellBytes(payload, count: Int(length)) { arena.appendCell($0) }
                }
                column.setNullInOwnPages((tag, payload, length), at: row)
            }
            columns[attribute] = column
        }
        return ColumnBlock(schema: schema, count: slots.count, columns: columns, arena: arena)
    }

    // MARK: Internals

    /// A new free slot at the end, its cells NULL.
    private func appendSlot() {
        for attribute in columns.indices { columns[attribute].appendNull() }
        liveFlags.append(false)
    }

    /// Writes `row` into the cells at `slot` and returns the arena bytes the old values held.
    ///
    /// Static, with the columns and the arena passed `inout`: one exclusive access to each for the
    /// whole row instead of one per cell.
    private static func write(_ row: [DatabaseValue], at slot: Int, into columns: inout [Column],
                              arena: inout PagedArena) -> Int {
        var freed = 0
        for attribute in columns.indices {
            let (tag, payload, length) = Column.cell(row[attribute], arena: &arena)
            freed += columns[attribute].replace(at: slot, tag: tag, payload: payload, length: length)
        }
        return freed
    }

    /// Makes the cells at `slot` NULL and returns the arena bytes they held.
    private static func clear(at slot: Int, in columns: inout [Column]) -> Int {
        var freed = 0
        for attribute in columns.indices {
            freed += columns[attribute].replace(at: slot, tag: CellTag.null, payload: 0, length: 0)
        }
        return freed
    }

    private func compactIfNeeded() {
        guard garbageByteCount > Self.compactionThreshold, garbageByteCount > arena.count - garbageByteCount else {
            return
        }
        compact()
    }

    /// Rewrites the arena with live bytes only, column by column.
    private func compact() {
        var compacted = PagedArena()
        for attribute in columns.indices { columns[attribute].moveBytes(from: arena, to: &compacted) }
        arena = compacted
        takenPage = nil
        garbageByteCount = 0
    }
}
