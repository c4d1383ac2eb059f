import Foundation

/// Up to ``capacity`` rows of one entity in cell form, in memory of its own that is filled,
/// emptied and filled again: what a fetch writes a statement's rows into on the store's queue,
/// while another thread appends the batch before to the block being built
/// (``ColumnBlock/append(_:)``). The statement's thread then only steps and copies bytes into
/// memory that stays in cache, and the block's growth — fresh pages faulted in, the key index,
/// the arena's copies — runs beside it.
///
/// A cell is a tag, a payload and a length, as a ``Column`` keeps it; a text or blob payload is
/// an offset into the batch's ``arenaBytes``. Every row appended is checked against the schema
/// (the storage classes each attribute admits; text is UTF-8, repaired as a `String` repairs it
/// when it is not), so a batch holds only rows a block can hold — all but their keys, which the
/// block indexes.
///
/// `@unchecked Sendable`, and safe: a batch is used by one thread at a time. The thread that
/// fills it hands it over through a ``HandOff`` and takes it back only once the consuming thread
/// has handed it back, and the hand-off's lock orders every write before the other thread's
/// reads. Its memory is its own (allocated here, freed in `deinit`), never shared.
final class CellBatch: @unchecked Sendable {
    let schema: EntitySchema
    /// The most rows the batch holds.
    let capacity: Int
    /// The rows held.
    private(set) var count = 0
    /// Per attribute, the storage classes it admits (``AttributeSchema/admittedClasses``).
    private let admitted: [StorageClasses]
    /// Attribute `a`'s cell of row `r` is at `a * capacity + r` of each.
    private let tags: UnsafeMutablePointer<UInt8>
    private let payloads: UnsafeMutablePointer<UInt64>
    private let lengths: UnsafeMutablePointer<UInt32>
    /// The text and blob bytes of the rows, one after the other.
    private var bytes: Bytes

    /// An empty batch of `schema`'s rows with room for `capacity` rows (and text and blob bytes
    /// for `bytes`, growing as rows need).
    init(schema: EntitySchema, capacity: Int, bytes: Int = 256 * 1024) {
        precondition(capacity > 0, "a batch holds at least one row")
        self.schema = schema
        self.capacity = capacity
        admitted = schema.admittedClasses
        let cells = schema.attributes.count * capacity
        tags = .allocate(capacity: cells)
        payloads = .allocate(capacity: cells)
        lengths = .allocate(capacity: cells)
        self.bytes = Bytes(capacity: bytes)
    }

    deinit {
        tags.deallocate()
        payloads.deallocate()
        lengths.deallocate()
        bytes.deallocate()
    }

    var isFull: Bool { count == capacity }

    /// Empties the batch, keeping its memory.
    func removeAll() {
        count = 0
        bytes.used = 0
    }

    // MARK: Reading

    /// The cells of `attribute`, row by row.
    func cells(of attribute: Int) -> (tags: UnsafeBufferPointer<UInt8>, payloads: UnsafeBufferPointer<UInt64>,
                                      lengths: UnsafeBufferPointer<UInt32>) {
        precondition(attribute >= 0 && attribute < admitted.count, "attribute \(attribute) of \(admitted.count)")
        let start = attribute * capacity
        return (UnsafeBufferPointer(start: tags + start, count: count), UnsafeBufferPointer(start: payloads + start, count: count),
                UnsafeBufferPointer(start: lengths + start, count: count))
    }

    /// The text and blob bytes of every row, which the text and blob payloads point into.
    var arenaBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes.start, count: bytes.used) }

    // MARK: Writing

    /// Appends the row `source` is on after checking it, each cell read once and its bytes copied, no `String`
    /// or `Data` made. A row with a cell its attribute does not admit, or text that is not valid
    /// UTF-8, is read again as values and checked by ``EntitySchema/checkRow(_:)``: text is then
    /// repaired as a `String` repairs it (both ways store the same bytes), and any other
    /// mismatch throws its precise error.
    /// - Throws: ``StrataError`` naming the entity, attribute and object; the batch is as before.
    /// - Precondition: the batch is not full.
    func append(_ source: some CellSource & RowSource) throws {
        precondition(count < capacity, "a row appended to a full batch")
        // The bytes are appended to a copy of `bytes` (a pointer and two counts), written back
        // once per row — and before a row is taken the slow way, since an append may have moved
        // them: an inout access to the property per cell would pay an exclusivity check per cell.
        var arena = bytes
        let rowStart = arena.used, row = count
        for attribute in admitted.indices {
            let index = attribute * capacity + row
            let cell: (tag: UInt8, payload: UInt64, length: UInt32)
            switch source.cell(at: attribute) {
            case .null: cell = (CellTag.null, 0, 0)
            case .integer(let integer): cell = (CellTag.integer, UInt64(bitPattern: integer), 0)
            case .real(let real): cell = (CellTag.real, real.bitPattern, 0)
            case .text(let text):
                guard Self.isValidUTF8(text) else {
                    bytes = arena
                    return try appendChecked(source, bytesFrom: rowStart)
                }
                cell = Column.cell(CellTag.text, text, arena: &arena)
            case .blob(let blob): cell = Column.cell(CellTag.blob, blob, arena: &arena)
            }
            guard admitted[attribute].contains(tag: cell.tag) else {
                bytes = arena
                return try appendChecked(source, bytesFrom: rowStart)
            }
            (tags[index], payloads[index], lengths[index]) = cell
        }
        bytes = arena
        count = row + 1
    }

    /// ``append(_:)`` through values, after dropping the bytes the row's cells wrote from `start` on.
    private func appendChecked(_ row: some RowSource, bytesFrom start: Int) throws {
        bytes.used = start
        let values = admitted.indices.map(row.value(at:))
        try schema.checkRow(values)
        for (attribute, value) in values.enumerated() {
            let index = attribute * capacity + count
            (tags[index], payloads[index], lengths[index]) = Column.cell(value, arena: &bytes)
        }
        count += 1
    }

    /// A batch's text and blob bytes: raw memory, grown by moving when a row needs more room; a
    /// payload is an offset from `start`.
    private struct Bytes: CellArena {
        private(set) var start: UnsafeMutableRawPointer
        private var capacity: Int
        var used = 0

        init(capacity: Int) {
            self.capacity = max(capacity, 1)
            start = .allocate(byteCount: self.capacity, alignment: 8)
        }

        func deallocate() { start.deallocate() }

        func withCellBytes<R>(_ payload: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try body(UnsafeRawBufferPointer(start: start + Int(truncatingIfNeeded: payload), count: count))
        }

        mutating func appendCell(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
            let offset = used
            if offset + bytes.count > capacity {
                let grown = max(capacity * 2, offset + bytes.count)
                let moved = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
                moved.copyMemory(from: start, byteCount: offset)
                start.deallocate()
                (start, capacity) = (moved, grown)
            }
            if let source = bytes.baseAddress { (start + offset).copyMemory(from: source, byteCount: bytes.count) }
            used = offset + bytes.count
            return UInt64(offset)
        }
    }

    /// Whether `bytes` are valid UTF-8 (ASCII checked a word at a time first).
    private static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        var high: UInt64 = 0
        while offset + 8 <= bytes.count {
            high |= bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < bytes.count {
            high |= UInt64(bytes[offset])
            offset += 1
        }
        if high & 0x8080_8080_8080_8080 == 0 { return true }
        return String(validating: bytes, as: UTF8.self) != nil
    }
}
