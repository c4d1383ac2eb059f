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
    /// Per attribute, a bit per cell tag it admits (``AttributeSchema/admittedCellTags``).
    private let admitted: [UInt8]
    /// Attribute `a`'s cell of row `r` is at `a * capacity + r` of each.
    private let tags: UnsafeMutablePointer<UInt8>
    private let payloads: UnsafeMutablePointer<UInt64>
    private let lengths: UnsafeMutablePointer<UInt32>
    /// The text and blob bytes of the rows, one after the other.
    private var bytes: UnsafeMutableRawPointer
    private var bytesCapacity: Int
    private var bytesUsed = 0

    /// An empty batch of `schema`'s rows with room for `capacity` rows (and text and blob bytes
    /// for `bytes`, growing as rows need).
    init(schema: EntitySchema, capacity: Int, bytes: Int = 256 * 1024) {
        precondition(capacity > 0, "a batch holds at least one row")
        self.schema = schema
        self.capacity = capacity
        admitted = schema.admittedCellTags.map { tags in
            tags.enumerated().reduce(UInt8(0)) { mask, tag in tag.element ? mask | 1 << tag.offset : mask }
        }
        let cells = schema.attributes.count * capacity
        tags = .allocate(capacity: cells)
        payloads = .allocate(capacity: cells)
        lengths = .allocate(capacity: cells)
        bytesCapacity = max(bytes, 1)
        self.bytes = .allocate(byteCount: bytesCapacity, alignment: 8)
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
        bytesUsed = 0
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
    var arenaBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes, count: bytesUsed) }

    // MARK: Writing

    /// Appends `row` after checking it, each cell read once and its bytes copied, no `String`
    /// or `Data` made. A row with a cell its attribute does not admit, or text that is not valid
    /// UTF-8, is read again as values and checked by ``EntitySchema/checkRow(_:)``: text is then
    /// repaired as a `String` repairs it (both ways store the same bytes), and any other
    /// mismatch throws its precise error.
    /// - Throws: ``StrataError`` naming the entity, attribute and object; the batch is as before.
    /// - Precondition: the batch is not full.
    func append(_ row: some CellSource & RowSource) throws {
        precondition(count < capacity, "a row appended to a full batch")
        let rowStart = bytesUsed
        for attribute in admitted.indices {
            let index = attribute * capacity + count
            let tag: UInt8
            switch row.cell(at: attribute) {
            case .null:
                (tag, payloads[index], lengths[index]) = (CellTag.null, 0, 0)
            case .integer(let integer):
                (tag, payloads[index], lengths[index]) = (CellTag.integer, UInt64(bitPattern: integer), 0)
            case .real(let real):
                (tag, payloads[index], lengths[index]) = (CellTag.real, real.bitPattern, 0)
            case .text(let text):
                guard Self.isValidUTF8(text) else { return try appendChecked(row, bytesFrom: rowStart) }
                tag = CellTag.text
                (payloads[index], lengths[index]) = appendBytes(text)
            case .blob(let blob):
                tag = CellTag.blob
                (payloads[index], lengths[index]) = appendBytes(blob)
            }
            guard admitted[attribute] & 1 << tag != 0 else { return try appendChecked(row, bytesFrom: rowStart) }
            tags[index] = tag
        }
        count += 1
    }

    /// ``append(_:)`` through values, after dropping the bytes the row's cells wrote from `start` on.
    private func appendChecked(_ row: some RowSource, bytesFrom start: Int) throws {
        bytesUsed = start
        let values = admitted.indices.map(row.value(at:))
        try schema.checkRow(values)
        for (attribute, value) in values.enumerated() {
            let index = attribute * capacity + count
            switch value {
            case .null: (tags[index], payloads[index], lengths[index]) = (CellTag.null, 0, 0)
            case .integer(let integer): (tags[index], payloads[index], lengths[index]) = (CellTag.integer, UInt64(bitPattern: integer), 0)
            case .real(let real): (tags[index], payloads[index], lengths[index]) = (CellTag.real, real.bitPattern, 0)
            case .text(var text):
                // The UTF-8 bytes themselves (NUL included), not a C string.
                tags[index] = CellTag.text
                (payloads[index], lengths[index]) = text.withUTF8 { appendBytes(UnsafeRawBufferPointer($0)) }
            case .blob(let data):
                tags[index] = CellTag.blob
                (payloads[index], lengths[index]) = data.withUnsafeBytes { appendBytes($0) }
            }
        }
        count += 1
    }

    /// Copies `source` after the bytes held and returns its cell's payload and length.
    private func appendBytes(_ source: UnsafeRawBufferPointer) -> (UInt64, UInt32) {
        guard let length = UInt32(exactly: source.count) else {
            preconditionFailure("a value has \(source.count) bytes; a cell holds at most 4 GiB")
        }
        let offset = bytesUsed
        if offset + source.count > bytesCapacity {
            let grown = max(bytesCapacity * 2, offset + source.count)
            let moved = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
            moved.copyMemory(from: bytes, byteCount: offset)
            bytes.deallocate()
            (bytes, bytesCapacity) = (moved, grown)
        }
        if let start = source.baseAddress { (bytes + offset).copyMemory(from: start, byteCount: source.count) }
        bytesUsed = offset + source.count
        return (UInt64(offset), length)
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
