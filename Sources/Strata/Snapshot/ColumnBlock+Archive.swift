import Foundation

#if !_endian(little)
#error("snapshot chunks store cells in the host's byte order, which must be little-endian")
#endif

/// A snapshot chunk's payload (format 5): the block's cells with nothing a load can derive, so
/// that loading is decompression and one pass over the cells, not a per-object decode.
///
/// ```
/// for each attribute, in schema order:
///     tags     n bytes                       0 NULL, 1 integer, 2 real, 3 text, 4 blob
///     numbers  8 bytes per integer/real cell  the value's bits, in row order
///     lengths  4 bytes per text/blob cell     its byte count, in row order
/// arena        the rest                      the text and blob bytes of every attribute not
///                                            deferred, attribute by attribute, row by row, one
///                                            after the other
/// ```
/// The deferred attributes' bytes (``EntitySchema/deferredAttributes``) are the chunk's
/// *deferred bytes*, in the same order, compressed in a frame of their own: a load checks that
/// frame's checksum and leaves it compressed until one of its values is read.
///
/// Integers are little-endian. A NULL cell is its tag alone; a text or blob cell's bytes start
/// where the previous one's (of its part: arena or deferred bytes) end, so its place is the sum
/// of the lengths before it: no offset is stored, and no length for a number, so a chunk holds
/// nothing a load can derive.
extension ColumnBlock {
    /// A block in the chunk layout: its cells and arena, the arena's size (the header records
    /// it, so a load knows where the cells end before it decompresses), and its deferred bytes.
    struct Archived {
        var bytes: [UInt8]
        var arenaSize: Int
        var deferred: [UInt8]
    }

    /// The block's cells and arena in the chunk layout, and its deferred bytes.
    func archived() -> Archived {
        // First the sizes, and whether the block's arena already holds the bytes in the chunk's
        // order and nothing else (a table's archive blocks do when nothing is deferred:
        // `ColumnTable.block`), so that it is copied whole rather than cell by cell.
        var sizes: [(numbers: Int, texts: Int)] = []
        var next: UInt64 = 0, deferredSize = 0
        var inOrder = schema.deferredAttributes.isEmpty && deferred.isEmpty
        for (position, column) in columns.enumerated() {
            var numbers = 0, texts = 0, row = 0
            let isDeferred = schema.isDeferred(position)
            column.tags.forEachPart { tags in
                for tag in tags {
                    if tag >= CellTag.text {
                        texts += 1
                        if isDeferred {
                            deferredSize += Int(column.lengths[row])
                        } else {
                            inOrder = inOrder && column.payloads[row] == next
                            next += UInt64(column.lengths[row])
                        }
                    } else if tag != CellTag.null {
                        numbers += 1
                    }
                    row += 1
                }
            }
            sizes.append((numbers, texts))
        }
        let arenaSize = Int(next)
        let cellBytes = sizes.reduce(count * columns.count) { $0 + 8 * $1.numbers + 4 * $1.texts }
        let source = BlockBytes(arena: arena, deferred: deferred)
        var deferredBytes = [UInt8](repeating: 0, count: deferredSize)
        guard cellBytes + arenaSize > 0 else { return Archived(bytes: [], arenaSize: 0, deferred: deferredBytes) }
        let bytes = [UInt8](unsafeUninitializedCapacity: cellBytes + arenaSize) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            deferredBytes.withUnsafeMutableBytes { deferredRaw in
                var offset = 0, arenaOffset = cellBytes, deferredOffset = 0
                for (position, (column, size)) in zip(columns, sizes).enumerated() {
                    var tagsAt = offset, numbersAt = offset + count, lengthsAt = offset + count + 8 * size.numbers
                    offset = lengthsAt + 4 * size.texts
                    let isDeferred = schema.isDeferred(position)
                    var row = 0
                    column.tags.forEachPart { tags in
                        UnsafeMutableRawBufferPointer(rebasing: raw[tagsAt..<(tagsAt + tags.count)])
                            .copyMemory(from: UnsafeRawBufferPointer(tags))
                        tagsAt += tags.count
                        for tag in tags {
                            if tag >= CellTag.text {
                                let length = column.lengths[row]
                                raw.storeBytes(of: length.littleEndian, toByteOffset: lengthsAt, as: UInt32.self)
                                lengthsAt += 4
                                if isDeferred {
                                    source.withCellBytes(column.payloads[row], count: Int(length)) { cell in
                                        UnsafeMutableRawBufferPointer(rebasing: deferredRaw[deferredOffset..<(deferredOffset + cell.count)])
                                            .copyMemory(from: cell)
                                    }
                                    deferredOffset += Int(length)
                                } else if !inOrder {
                                    source.withCellBytes(column.payloads[row], count: Int(length)) { cell in
                                        UnsafeMutableRawBufferPointer(rebasing: raw[arenaOffset..<(arenaOffset + cell.count)])
                                            .copyMemory(from: cell)
                                    }
                                    arenaOffset += Int(length)
                                }
                            } else if tag != CellTag.null {
                                raw.storeBytes(of: column.payloads[row].littleEndian, toByteOffset: numbersAt, as: UInt64.self)
                                numbersAt += 8
                            }
                            row += 1
                        }
                    }
                }
            }
            if inOrder {
                arena.withUnsafeBytes { arena in
                    UnsafeMutableRawBufferPointer(rebasing: raw[cellBytes...]).copyMemory(from: UnsafeRawBufferPointer(rebasing: arena[..<arenaSize]))
                }
            }
            initialized = cellBytes + arenaSize
        }
        return Archived(bytes: bytes, arenaSize: arenaSize, deferred: deferredBytes)
    }

    /// Parses a chunk of `count` rows of `schema` whose last `arenaSize` bytes are its arena,
    /// checking every cell (``parseArchived(_:count:schema:arenaSize:deferredSize:)``); its
    /// deferred attributes' cells point into `deferred` (page 1 of the block, filled on first
    /// read), which holds the chunk's deferred bytes. Keys are not indexed (``indexKeys()``).
    init(archived bytes: UnsafeRawBufferPointer, count: Int, arenaSize: Int, deferred: ArenaPage?,
         schema: EntitySchema) throws(StrataError) {
        guard arenaSize >= 0, arenaSize <= bytes.count, arenaSize <= Int(UInt32.max) else {
            throw .snapshot(.undecodable, "\(schema.name): a chunk of \(bytes.count) bytes claims an arena of \(arenaSize)",
                            entity: schema.name)
        }
        let cells = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - arenaSize)])
        let arena = UnsafeRawBufferPointer(rebasing: bytes[(bytes.count - arenaSize)...])
        // Every cell checked before room is made for `count` rows: a count the bytes cannot
        // hold is refused, not allocated.
        try Self.checkCellBytes(cells.count, count: count, schema: schema)
        let parsed = try Self.parseArchived(cells, count: count, schema: schema, arenaSize: arenaSize,
                                            deferredSize: deferred?.used ?? 0)
        self.init(schema: schema, capacity: count, reservesKeys: false)
        appendUnwritten(rows: count, arenaBytes: arenaSize) { columns, arenaSpace in
            for (column, writer) in zip(parsed, columns) {
                writer.write(tags: column.tags, numbers: column.numbers, lengths: column.lengths, at: 0,
                             bytesFrom: column.isDeferred ? Self.deferredPayloadBase(page: 0) + column.arenaStart : column.arenaStart)
            }
            arenaSpace.copyMemory(from: arena)
        }
        if let deferred { setDeferred([deferred]) }
    }

    /// The least bytes a row of `schema` takes in a chunk: a tag per attribute, and a number or a
    /// length for each one that cannot be NULL.
    static func leastBytesPerRow(_ schema: EntitySchema) -> Int {
        schema.attributes.reduce(0) { total, attribute in
            let admitted = attribute.admittedClasses
            let least = admitted.contains(.null) ? 0 : (admitted.contains(.text) || admitted.contains(.blob) ? 4 : 8)
            return total + 1 + least
        }
    }

    /// Checks that `cells` bytes can hold the cells of `count` rows of `schema` (at least
    /// ``leastBytesPerRow(_:)`` each): what a load checks of every chunk's sizes in the header
    /// before it makes room for the rows.
    static func checkCellBytes(_ cells: Int, count: Int, schema: EntitySchema) throws(StrataError) {
        let (least, overflow) = count.multipliedReportingOverflow(by: leastBytesPerRow(schema))
        guard count >= 0, cells >= 0, !overflow, least <= cells else {
            throw .snapshot(.undecodable, "\(schema.name): a chunk of \(count) objects is larger than its \(cells) bytes of cells",
                            entity: schema.name)
        }
    }

    /// Whether every byte of `bytes` is `byte`: read 8 bytes at a time, so that a column of one
    /// storage class is checked at a fraction of a branch per cell.
    static func everyByte(of bytes: UnsafeRawBufferPointer, is byte: UInt8) -> Bool {
        let word = UInt64(byte) &* 0x0101_0101_0101_0101
        var offset = 0
        while offset + 8 <= bytes.count {
            guard bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == word else { return false }
            offset += 8
        }
        while offset < bytes.count {
            guard bytes[offset] == byte else { return false }
            offset += 1
        }
        return true
    }

    /// One attribute's cells in a chunk's bytes, read in place (unaligned).
    struct ArchivedColumn {
        let tags: UnsafeRawBufferPointer
        /// The integer and real cells' values, 8 bytes each, in row order.
        let numbers: UnsafeRawBufferPointer
        /// The text and blob cells' byte counts, 4 bytes each, in row order.
        let lengths: UnsafeRawBufferPointer
        /// Where the first text or blob cell's bytes start in the chunk's arena, or in its
        /// deferred bytes for a deferred attribute.
        let arenaStart: UInt64
        /// Whether the attribute is deferred (``EntitySchema/deferredAttributes``).
        let isDeferred: Bool
    }

    /// Parses the cells of a chunk of `count` rows of `schema`, checking every one: a known tag
    /// that the attribute reads (``AttributeSchema/admittedClasses``: the schema's one rule; NULL
    /// only where it is optional), the numbers and lengths its tags call for and no byte more,
    /// and text and blob lengths that add up to exactly the `arenaSize` bytes of the arena — and,
    /// for the deferred attributes, to exactly the chunk's `deferredSize` deferred bytes.
    static func parseArchived(_ cells: UnsafeRawBufferPointer, count: Int, schema: EntitySchema,
                              arenaSize: Int, deferredSize: Int) throws(StrataError) -> [ArchivedColumn] {
        var columns: [ArchivedColumn] = []
        columns.reserveCapacity(schema.attributes.count)
        var offset = 0, arenaUsed: UInt64 = 0, deferredUsed: UInt64 = 0
        for (position, attribute) in schema.attributes.enumerated() {
            guard count <= cells.count - offset else {
                throw .snapshot(.undecodable, "\(schema.name).\(attribute.name): a chunk's cells end before its \(count) objects' tags",
                                entity: schema.name)
            }
            let tags = UnsafeRawBufferPointer(rebasing: cells[offset..<(offset + count)])
            offset += count
            let admitted = attribute.admittedClasses
            var numbers = 0, texts = 0
            if let tag = tags.first, admitted.contains(tag: tag), Self.everyByte(of: tags, is: tag) {
                // One storage class throughout (most columns): checked a word at a time.
                if tag >= CellTag.text { texts = count } else if tag != CellTag.null { numbers = count }
            } else {
                for cell in 0..<count {
                    let tag = tags[cell]
                    guard admitted.contains(tag: tag) else {
                        let named = StorageClass(rawValue: tag).map { " (\($0.name))" } ?? " (no storage class)"
                        throw .snapshot(.undecodable, "\(schema.name).\(attribute.name): object \(cell) of a chunk holds storage "
                                        + "class \(tag)\(named), "
                                        + "which a \(attribute.isOptional ? "optional " : "")\(attribute.type.rawValue) attribute cannot read",
                                        entity: schema.name)
                    }
                    if tag >= CellTag.text { texts += 1 } else if tag != CellTag.null { numbers += 1 }
                }
            }
            guard numbers * 8 + texts * 4 <= cells.count - offset else {
                throw .snapshot(.undecodable, "\(schema.name).\(attribute.name): a chunk's cells end before its values",
                                entity: schema.name)
            }
            let numberBytes = UnsafeRawBufferPointer(rebasing: cells[offset..<(offset + numbers * 8)])
            offset += numbers * 8
            let lengthBytes = UnsafeRawBufferPointer(rebasing: cells[offset..<(offset + texts * 4)])
            offset += texts * 4
            let isDeferred = schema.isDeferred(position)
            var used = isDeferred ? deferredUsed : arenaUsed
            columns.append(ArchivedColumn(tags: tags, numbers: numberBytes, lengths: lengthBytes, arenaStart: used,
                                          isDeferred: isDeferred))
            for text in 0..<texts { used += UInt64(lengthBytes.loadUnaligned(fromByteOffset: text * 4, as: UInt32.self)) }
            if isDeferred { deferredUsed = used } else { arenaUsed = used }
        }
        guard offset == cells.count else {
            throw .snapshot(.undecodable, "\(schema.name): a chunk's cells hold \(cells.count - offset) bytes more than its "
                            + "\(count) objects", entity: schema.name)
        }
        guard arenaUsed == UInt64(arenaSize) else {
            throw .snapshot(.undecodable, "\(schema.name): a chunk's text and blob cells hold \(arenaUsed) bytes, its arena "
                            + "\(arenaSize)", entity: schema.name)
        }
        guard deferredUsed == UInt64(deferredSize) else {
            throw .snapshot(.undecodable, "\(schema.name): a chunk's deferred cells hold \(deferredUsed) bytes, its deferred "
                            + "bytes \(deferredSize)", entity: schema.name)
        }
        return columns
    }
}
