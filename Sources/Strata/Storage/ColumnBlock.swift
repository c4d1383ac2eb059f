import Foundation

/// Rows of one entity in column form, detached from any table: what a snapshot chunk parses
/// into and a fetch fills off the main actor, and what a ``ColumnTable`` adopts whole (in O(1)
/// when it is empty). A value type of paged arrays (``PagedArray``), so it crosses isolation as
/// it is, and a table adopts its columns with no cell copied.
///
/// Cells are laid out as a table's are (``Column``: a tag, a payload and a length per cell;
/// text and blob bytes in the block's own arena, offsets relative to it). Every row appended is
/// checked against the schema first (``EntitySchema/checkRow(_:)``), and the key index refuses a
/// second row with the same primary key, so a block always holds rows a context can hold.
struct ColumnBlock: Sendable {
    let schema: EntitySchema
    private(set) var count = 0
    private(set) var columns: [Column]
    private(set) var arena: [UInt8] = []
    /// The pages of a loaded block's deferred attributes (``Entity/deferredAttributes``), one per
    /// snapshot chunk, each filled on the first read of any of its bytes: a cell in page `n`
    /// has the ``ArenaAddress`` of page `n + 1` (page 0 is ``arena``, under 4 GiB then).
    private(set) var deferred: [ArenaPage] = []
    /// Primary key → row, for every row (``KeyHash``).
    private(set) var keyIndex = KeyHash()

    /// An empty block of `schema`'s rows, with room for `capacity` rows, and for as many keys
    /// unless `reservesKeys` is false (rows appended without their keys, indexed later by
    /// ``indexKeys()``).
    init(schema: EntitySchema, capacity: Int = 0, reservesKeys: Bool = true) {
        self.schema = schema
        self.columns = Array(repeating: Column(), count: schema.attributes.count)
        if capacity > 0 {
            for attribute in columns.indices { columns[attribute].reserveCapacity(capacity) }
            if reservesKeys { keyIndex = KeyHash(capacity: capacity) }
        }
    }

    /// A block made of parsed cells whose keys are not indexed yet (see ``indexKeys()``).
    init(schema: EntitySchema, count: Int, columns: [Column], arena: [UInt8], deferred: [ArenaPage] = []) {
        self.schema = schema
        self.count = count
        self.columns = columns
        self.arena = arena
        self.deferred = deferred
    }

    // MARK: Reading

    /// The value of `attribute` in row `row`.
    func value(at row: Int, _ attribute: Int) -> DatabaseValue {
        deferred.isEmpty ? columns[attribute].value(at: row, arena: arena)
            : columns[attribute].value(at: row, arena: BlockBytes(arena: arena, deferred: deferred))
    }

    /// The payload of the first byte of deferred page `page`: the address of page `page + 1`
    /// (page 0 is the arena), as ``BlockBytes`` and a table adopting the block read it.
    static func deferredPayloadBase(page: Int) -> UInt64 { ArenaAddress(page: page + 1).payload }

    /// A block's cell bytes with its deferred pages: page 0 the arena, page `n + 1` the deferred page `n`.
    struct BlockBytes: CellBytes {
        let arena: [UInt8]
        let deferred: [ArenaPage]

        func withCellBytes<R>(_ payload: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            let address = ArenaAddress(payload: payload)
            guard address.page > 0, count > 0 else {
                return try arena.withCellBytes(address.page > 0 ? 0 : payload, count: count, body)
            }
            return try body(deferred[address.page - 1].bytes(address.offset, count))
        }
    }

    /// Compares this block's rows in `sort` (then by key), cell by cell in place (``RowOrder``).
    func order(by sort: [(position: Int, ascending: Bool)]) -> RowOrder<[UInt8]> {
        RowOrder(columns: columns, arena: arena, sort: sort, keyPosition: schema.primaryKeyIndex)
    }

    /// The primary key of row `row`.
    func key(at row: Int) -> DatabaseValue { value(at: row, schema.primaryKeyIndex) }

    /// The row whose primary key is `key`, or nil (once the keys are indexed).
    func row(ofKey key: DatabaseValue) -> Int? {
        KeyProbe.with(key) { probe in row(holding: probe, hash: probe.hash) }
    }

    /// The row whose key cell holds `probe`'s value (whose hash is `hash`), or nil.
    private func row(holding probe: KeyProbe, hash: UInt32) -> Int? {
        keyIndex.find(probe, hash: hash, in: columns[schema.primaryKeyIndex], arena: arena)
    }

    /// Indexes the key of the row about to be appended (row `count`), which `probe` holds.
    /// - Throws: ``StrataError`` when a row already has it.
    private mutating func indexNewKey(_ probe: KeyProbe, _ key: @autoclosure () -> DatabaseValue) throws {
        let hash = probe.hash
        guard row(holding: probe, hash: hash) == nil else { throw duplicateKey(key()) }
        keyIndex.insert(hash, slot: count)
    }

    private func duplicateKey(_ key: DatabaseValue) -> StrataError {
        StrataError(.constraint, "two rows of \(schema.name) have the primary key \(key)", entity: schema.name,
                    objectID: key.description)
    }

    /// One row of a block, read cell by cell.
    struct RowView: RowSource {
        let block: ColumnBlock
        let row: Int
        func value(at position: Int) -> DatabaseValue { block.value(at: row, position) }
    }

    /// Row `row` as a ``RowSource`` that reads each cell only when asked.
    func rowView(at row: Int) -> RowView { RowView(block: self, row: row) }

    /// Row `row`, in the schema's attribute order.
    func row(at row: Int) -> [DatabaseValue] { columns.indices.map { value(at: row, $0) } }

    // MARK: Writing

    /// Appends a row after checking it (storage classes, NULLs, width) and that its key is new.
    /// - Throws: ``StrataError`` naming the entity, attribute and object.
    mutating func append(_ row: some RowSource) throws {
        var values: [DatabaseValue] = []
        values.reserveCapacity(columns.count)
        for attribute in columns.indices { values.append(row.value(at: attribute)) }
        try schema.checkRow(values)
        let key = values[schema.primaryKeyIndex]
        try KeyProbe.with(key) { probe in try indexNewKey(probe, key) }
        for attribute in columns.indices {
            columns[attribute].append(values[attribute], arena: &arena)
        }
        count += 1
    }

    /// Moves the rows of `batch` (checked as it took them) into the block, leaving the batch
    /// empty to fill again, and indexes their keys: a statement's rows as a fetch takes them, a
    /// batch at a time (``CellBatch``).
    /// - Throws: ``StrataError`` when a row's key is held already — by a row of this block or
    ///   an earlier row of the batch. The block is then thrown away: the batch's rows are in it.
    mutating func append(_ batch: CellBatch) throws {
        defer { batch.removeAll() }
        let first = count, base = UInt64(arena.count)
        for attribute in columns.indices {
            let cells = batch.cells(of: attribute)
            columns[attribute].append(tags: cells.tags, payloads: cells.payloads, lengths: cells.lengths, rebasedBy: base)
        }
        arena.append(contentsOf: batch.arenaBytes)
        count += batch.count
        try indexKeys(of: first..<count)
    }

    /// Gives the block the deferred pages its cells point at (a loaded section's, one per chunk).
    mutating func setDeferred(_ pages: [ArenaPage]) { deferred = pages }

    /// Fills every deferred page now (as first reads would) and returns whether each filled.
    func fillDeferred() -> Bool {
        deferred.allSatisfy { page in
            page.fill()
            return page.deferred?.failed != true
        }
    }

    /// Appends `rows` rows and `arenaBytes` arena bytes left unwritten, and calls `body` with a
    /// writer per column and the new arena bytes, which several threads may write at once, each
    /// its own rows and bytes (``Column/DisjointWriter``): a snapshot's chunks are loaded in
    /// parallel, each straight to its place in the block. Everything appended must be written
    /// before the block is read; a block whose filling failed is thrown away.
    /// - Precondition: the block holds no arena bytes yet.
    mutating func appendUnwritten<R>(rows: Int, arenaBytes: Int,
                                     _ body: ([Column.DisjointWriter], UnsafeMutableRawBufferPointer) -> R) -> R {
        precondition(arena.isEmpty, "unwritten arena bytes appended to a block that holds some")
        // The columns' new pages carved from one allocation in huge pages, when it spans one.
        let cellBytes = columns.count * Column.unwrittenBytes(rows)
        let shared = count == 0 && cellBytes >= FreshMemory.hugePageSize ? SlabMemory(byteCount: cellBytes) : nil
        for attribute in columns.indices { columns[attribute].appendUnwritten(rows, carvingFrom: shared) }
        let writers = columns.indices.map { columns[$0].disjointWriter() }
        // Left uninitialized, so that the memory is first touched by the writers, in parallel.
        arena = [UInt8](unsafeUninitializedCapacity: arenaBytes) { _, initialized in initialized = arenaBytes }
        count += rows
        return arena.withUnsafeMutableBytes { body(writers, $0) }
    }

    /// Indexes every row's primary key.
    /// - Throws: ``StrataError`` when two rows have the same key.
    mutating func indexKeys() throws {
        keyIndex = KeyHash(capacity: count)
        try indexKeys(of: 0..<count)
    }

    /// Adds the keys of `rows`, the block's last rows, to the key index.
    /// - Throws: ``StrataError`` when one of them is held already.
    private mutating func indexKeys(of rows: Range<Int>) throws {
        var index = keyIndex
        keyIndex = KeyHash()   // so that `index` is the buckets' only owner, and writes them in place
        let keys = columns[schema.primaryKeyIndex]
        let duplicate: Int? = arena.withUnsafeBytes { arena in
            index.fill(adding: rows.count) { filler in
                var duplicate: Int?
                keys.forEachProbe(in: rows, arena: arena) { row, probe in
                    guard filler.insert(probe.hash, slot: row, unlessHeld: { keys.holds(probe, at: $0, arena: arena) }) == nil
                    else {
                        duplicate = row
                        return false
                    }
                    return true
                }
                return duplicate
            }
        }
        keyIndex = index
        if let duplicate { throw duplicateKey(key(at: duplicate)) }
    }

    /// Gives up the block's storage to a table adopting it.
    consuming func parts() -> (columns: [Column], arena: [UInt8], deferred: [ArenaPage], keyIndex: KeyHash) {
        (columns, arena, deferred, keyIndex)
    }
}
