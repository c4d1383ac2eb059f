import Foundation

#if !_endian(little)
#error("snapshot chunks store cells in the host's byte order, which must be little-endian")
#endif

/// A snapshot chunk's payload (formats 2 and 3): the block's cells as the contexts hold them, so that
/// loading is decompression and a bounds check, not a per-object decode.
///
/// ```
/// for each attribute, in schema order:
///     tags      n bytes      0 NULL, 1 integer, 2 real, 3 text, 4 blob
///     payloads  n × 8 bytes  integer or real bits; text and blob: offset into the chunk's arena
///     lengths   n × 4 bytes  text and blob: byte length; otherwise 0
/// arena         the rest     text (UTF-8) and blob bytes
/// ```
/// Integers are little-endian.
extension ColumnBlock {
    /// The bytes of one cell, over all columns.
    static let bytesPerCell = 1 + 8 + 4

    /// The block's cells and arena in the chunk layout.
    func archived() -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * columns.count * Self.bytesPerCell + arena.count)
        for column in columns {
            column.tags.forEachPart { bytes.append(contentsOf: UnsafeRawBufferPointer($0)) }
            column.payloads.forEachPart { bytes.append(contentsOf: UnsafeRawBufferPointer($0)) }
            column.lengths.forEachPart { bytes.append(contentsOf: UnsafeRawBufferPointer($0)) }
        }
        bytes.append(contentsOf: arena)
        return bytes
    }

    /// Parses a chunk of `count` rows of `schema`, checking every cell: a known tag that the
    /// attribute reads (NULL only where it is optional), no stray payload or length, text and
    /// blob bytes inside the arena. Keys are not indexed (``indexKeys()``).
    init(archived bytes: UnsafeRawBufferPointer, count: Int, schema: EntitySchema) throws(SnapshotRejection) {
        // Every cell checked before room is made for `count` rows: a count the bytes cannot
        // hold is refused, not allocated.
        let cells = try Self.cellBytes(count: count, schema: schema, within: bytes.count)
        let arena = UnsafeRawBufferPointer(rebasing: bytes[cells...])
        let cellBytes = UnsafeRawBufferPointer(rebasing: bytes[..<cells])
        try Self.checkArchived(cellBytes, count: count, schema: schema, arenaSize: arena.count)
        self.init(schema: schema, capacity: count, reservesKeys: false)
        appendUnwritten(rows: count, arenaBytes: arena.count) { columns, arenaSpace in
            for (attribute, writer) in columns.enumerated() {
                let column = ArchivedColumn(cellBytes, attribute: attribute, count: count)
                writer.write(tags: column.tags, payloads: column.payloads, lengths: column.lengths, at: 0, rebasedBy: 0)
            }
            arenaSpace.copyMemory(from: arena)
        }
    }

    /// The cell bytes of a chunk of `count` rows of `schema`, which must fit in `available`
    /// bytes (the chunk's size): what comes after them is the chunk's arena.
    static func cellBytes(count: Int, schema: EntitySchema, within available: Int) throws(SnapshotRejection) -> Int {
        let (cells, overflow) = count.multipliedReportingOverflow(by: schema.attributes.count * bytesPerCell)
        guard count >= 0, !overflow, cells <= available else {
            throw .undecodable("\(schema.name): a chunk of \(count) objects is larger than its \(available) bytes")
        }
        return cells
    }

    /// Checks the cells of a chunk of `count` rows of `schema` (``cellBytes(count:schema:within:)``
    /// bytes, every cell; see ``init(archived:count:schema:)``) against an arena of `arenaSize`
    /// bytes.
    static func checkArchived(_ cells: UnsafeRawBufferPointer, count: Int, schema: EntitySchema,
                              arenaSize: Int) throws(SnapshotRejection) {
        precondition(cells.count == count * schema.attributes.count * bytesPerCell, "a chunk's cells measured by cellBytes")
        for (attribute, attributeSchema) in schema.attributes.enumerated() {
            try check(ArchivedColumn(cells, attribute: attribute, count: count), attributeSchema, arenaSize: UInt64(arenaSize),
                      entity: schema.name)
        }
    }

    /// One attribute's cells in a chunk's bytes, read in place (unaligned).
    struct ArchivedColumn {
        let tags: UnsafeRawBufferPointer
        let payloads: UnsafeRawBufferPointer
        let lengths: UnsafeRawBufferPointer
        var count: Int { tags.count }

        init(_ bytes: UnsafeRawBufferPointer, attribute: Int, count: Int) {
            let start = attribute * count * ColumnBlock.bytesPerCell
            tags = UnsafeRawBufferPointer(rebasing: bytes[start..<start + count])
            payloads = UnsafeRawBufferPointer(rebasing: bytes[start + count..<start + 9 * count])
            lengths = UnsafeRawBufferPointer(rebasing: bytes[start + 9 * count..<start + 13 * count])
        }

        func tag(_ cell: Int) -> UInt8 { tags[cell] }
        func payload(_ cell: Int) -> UInt64 { payloads.loadUnaligned(fromByteOffset: cell * 8, as: UInt64.self) }
        func length(_ cell: Int) -> UInt32 { lengths.loadUnaligned(fromByteOffset: cell * 4, as: UInt32.self) }
    }

    /// Checks one parsed column against its attribute.
    private static func check(_ column: ArchivedColumn, _ attribute: AttributeSchema, arenaSize: UInt64,
                              entity: String) throws(SnapshotRejection) {
        // Which tags the attribute reads: the schema's one rule (AttributeType.admits), asked once per tag.
        let admitted = attribute.admittedCellTags
        for cell in 0..<column.count {
            let tag = column.tag(cell), payload = column.payload(cell), length = column.length(cell)
            guard tag <= CellTag.last, admitted[Int(tag)] else {
                throw .undecodable("\(entity).\(attribute.name): object \(cell) of a chunk holds storage class \(tag), "
                                   + "which a \(attribute.isOptional ? "optional " : "")\(attribute.type.rawValue) attribute cannot read")
            }
            switch tag {
            case CellTag.text, CellTag.blob:
                guard payload <= arenaSize, UInt64(length) <= arenaSize - payload else {
                    throw .undecodable("\(entity).\(attribute.name): object \(cell) of a chunk points outside the chunk's bytes")
                }
            case CellTag.null:
                guard payload == 0, length == 0 else { throw .undecodable("\(entity).\(attribute.name): a NULL cell holds a value") }
            default:
                guard length == 0 else { throw .undecodable("\(entity).\(attribute.name): a number cell has a length") }
            }
        }
    }
}
