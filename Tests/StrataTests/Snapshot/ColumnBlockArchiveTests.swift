import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Every storage class, optional and not, for the chunk layout's tests.
private struct ArchivedRow: Entity {
    var id: String
    var count: Int64
    var score: Double
    var note: String?
    var payload: Data
}

/// Snapshot formats 2 and 3 store chunks as cells (`ColumnBlock+Archive`): what is archived parses back
/// exactly, and a chunk whose checksums hold but whose cells do not (a crafted or miswritten
/// archive) is refused — every cell rule has a case here that breaks it.
@Suite struct ColumnBlockArchiveTests {
    private let schema = try! SchemaRegistry([ArchivedRow.self]).schema(for: ArchivedRow.self)

    private func sampleBlock() throws -> ColumnBlock {
        var block = ColumnBlock(schema: schema)
        for index in 0..<50 {
            try block.append([.text("row-\(index)"), .integer(Int64(index) - 25), .real(Double(index) / 3),
                              index % 3 == 0 ? .null : .text(String(repeating: "é", count: index)),
                              .blob(Data((0..<index).map { UInt8(truncatingIfNeeded: $0) }))] as [DatabaseValue])
        }
        return block
    }

    private func parse(_ bytes: [UInt8], count: Int) throws(SnapshotRejection) -> ColumnBlock {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SnapshotRejection) -> ColumnBlock in try ColumnBlock(archived: raw, count: count, schema: schema) }
        }
        return try result.get()
    }

    /// A file holding one section made of `chunks` (each a chunk's bytes and object count),
    /// each compressed and checksummed as a snapshot writes it, whatever its cells hold.
    private func archive(_ chunks: [(bytes: [UInt8], count: Int)]) throws -> (file: Data, entry: SnapshotHeader.Entry) {
        let frames = try chunks.map { chunk in try chunk.bytes.withUnsafeBytes { try LZ4Frame.compress($0) } }
        let layout = zip(chunks, frames).map { chunk, frame in
            (compressed: frame.count, uncompressed: chunk.bytes.count, objects: chunk.count,
             checksum: frame.withUnsafeBytes { XXH64.hash($0) })
        }
        let (header, described) = SnapshotHeader.encode(
            storeID: UUID(), generation: 1, createdAt: Date(), schemaFingerprint: SnapshotArchive.fingerprint([schema]),
            sections: [(schema.name, SnapshotArchive.fingerprint(schema), layout)])
        return (frames.reduce(header, +), try #require(described.entities.first))
    }

    /// What a load makes of the section: its chunks decompressed, checked and joined, in parallel.
    private func load(_ chunks: [(bytes: [UInt8], count: Int)]) throws -> ColumnBlock {
        let (file, entry) = try archive(chunks)
        let result = file.withUnsafeBytes { bytes in
            Result { () throws(SnapshotRejection) -> LoadedSection in try SnapshotArchive.section(entry, in: bytes, schema: schema) }
        }
        return try result.get().block
    }

    /// The offset of the cell of `attribute` for `row`, in a chunk of `count` rows: its tag, then
    /// its payload (`+ count + 8 * row`…) and length.
    private func cellOffsets(attribute: Int, row: Int, count: Int) -> (tag: Int, payload: Int, length: Int) {
        let column = attribute * count * ColumnBlock.bytesPerCell
        return (column + row, column + count + 8 * row, column + 9 * count + 4 * row)
    }

    @Test func anArchivedBlockParsesBackExactly() throws {
        let block = try sampleBlock()
        var parsed = try parse(block.archived(), count: block.count)
        try parsed.indexKeys()
        #expect(parsed.count == 50)
        for row in 0..<block.count { #expect(parsed.row(at: row) == block.row(at: row)) }
        #expect(parsed.row(ofKey: .text("row-7")) == 7)
        #expect(parsed.row(ofKey: .text("row-70")) == nil)
    }

    @Test func joinedChunksKeepEveryRowAndRefuseADuplicateKey() throws {
        let first = try sampleBlock()
        var second = ColumnBlock(schema: schema)
        try second.append([.text("other"), .integer(1), .real(1), .null, .blob(Data([9]))] as [DatabaseValue])
        // What a load does: the chunks written straight to their places in one block, by one
        // job per core (four chunks, so that each job takes more than one).
        var joined = try load([(first.archived(), first.count), (second.archived(), 1),
                               (ColumnBlock(schema: schema).archived(), 0),
                               (first.archived(), first.count)])
        #expect(joined.count == 101)
        #expect(joined.row(at: 50) == second.row(at: 0))
        for row in 0..<first.count {
            #expect(joined.row(at: row) == first.row(at: row), "the first chunk's offsets kept")
            #expect(joined.row(at: 51 + row) == first.row(at: row), "the last chunk's offsets rebased")
        }
        #expect(throws: StrataError.self) { try joined.indexKeys() }   // the first chunk twice

        var unique = try load([(first.archived(), first.count), (second.archived(), 1)])
        try unique.indexKeys()
        #expect(unique.row(ofKey: .text("other")) == 50)

        // A bad chunk refuses the section, even when only its last column is bad, and it is the
        // one reported whichever job met a problem first.
        var broken = second.archived()
        broken[cellOffsets(attribute: schema.attributes.count - 1, row: 0, count: 1).tag] = 9
        #expect(throws: SnapshotRejection.self) { try load([(first.archived(), first.count), (broken, 1)]) }
        do {
            _ = try load([(first.archived(), first.count), (broken, 1), (first.archived(), 3)])
            Issue.record("a section with a bad chunk was loaded")
        } catch let rejection as SnapshotRejection {
            #expect("\(rejection)".contains("storage class 9"), "\(rejection)")
        }
    }

    @Test func appendingARowChecksItAndItsKey() throws {
        var block = try sampleBlock()
        #expect(throws: StrataError.self) {
            try block.append([.text("row-1"), .integer(0), .real(0), .null, .blob(Data())] as [DatabaseValue])
        }
        #expect(throws: StrataError.self) {
            try block.append([.text("new"), .null, .real(0), .null, .blob(Data())] as [DatabaseValue])
        }
        #expect(throws: StrataError.self) {
            try block.append([.text("new"), .text("7"), .real(0), .null, .blob(Data())] as [DatabaseValue])
        }
        #expect(block.count == 50, "refused rows leave nothing behind")
    }

    @Test(arguments: ["unknown tag", "NULL where not optional", "text in an integer attribute",
                      "text outside the arena", "length past the arena", "NULL holding a payload",
                      "number with a length", "more objects than bytes", "truncated arena"])
    func aChunkBreakingACellRuleIsRefused(_ breakage: String) throws {
        let block = try sampleBlock()
        var bytes = block.archived()
        var count = block.count
        let arenaSize = bytes.count - count * schema.attributes.count * ColumnBlock.bytesPerCell
        switch breakage {
        case "unknown tag": bytes[cellOffsets(attribute: 1, row: 3, count: count).tag] = 9
        case "NULL where not optional":
            let cell = cellOffsets(attribute: 1, row: 3, count: count)
            bytes[cell.tag] = CellTag.null
            for offset in cell.payload..<cell.payload + 8 { bytes[offset] = 0 }
        case "text in an integer attribute": bytes[cellOffsets(attribute: 1, row: 3, count: count).tag] = CellTag.text
        case "text outside the arena":
            let payload = cellOffsets(attribute: 0, row: 5, count: count).payload
            withUnsafeBytes(of: UInt64(arenaSize + 1)) { for (index, byte) in $0.enumerated() { bytes[payload + index] = byte } }
        case "length past the arena":
            let length = cellOffsets(attribute: 4, row: 49, count: count).length
            withUnsafeBytes(of: UInt32(arenaSize)) { for (index, byte) in $0.enumerated() { bytes[length + index] = byte } }
        case "NULL holding a payload": bytes[cellOffsets(attribute: 3, row: 0, count: count).payload] = 1
        case "number with a length": bytes[cellOffsets(attribute: 2, row: 1, count: count).length] = 4
        case "more objects than bytes": count = bytes.count
        case "truncated arena": bytes.removeLast(1_000)
        default: Issue.record("unknown breakage \(breakage)")
        }
        #expect(throws: SnapshotRejection.self, "\(breakage)") { try parse(bytes, count: count) }
    }
}
