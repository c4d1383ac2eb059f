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

/// Snapshot format 2 stores chunks as cells (`ColumnBlock+Archive`): what is archived parses back
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

    /// `block.appendArchived` over `bytes`, in place (so a refused chunk shows what it left).
    private func appendArchived(_ bytes: [UInt8], count: Int, to block: inout ColumnBlock) throws {
        var failure: SnapshotRejection?
        bytes.withUnsafeBytes { raw in
            do {
                try block.appendArchived(raw, count: count)
            } catch {
                failure = error as? SnapshotRejection ?? .undecodable("\(error)")
            }
        }
        if let failure { throw failure }
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
        // What a load does: chunk after chunk appended from their bytes into one block.
        var joined = ColumnBlock(schema: schema, reservesKeys: false)
        try appendArchived(first.archived(), count: first.count, to: &joined)
        try appendArchived(second.archived(), count: 1, to: &joined)
        try joined.indexKeys()
        #expect(joined.count == 51)
        #expect(joined.row(at: 50) == second.row(at: 0))
        #expect(joined.row(at: 49) == first.row(at: 49), "arena offsets of the second chunk were rebased, the first's kept")

        try appendArchived(second.archived(), count: 1, to: &joined)
        #expect(throws: StrataError.self) { try joined.indexKeys() }

        // A bad chunk leaves the block as it was, even when only its last column is bad.
        var broken = second.archived()
        broken[cellOffsets(attribute: schema.attributes.count - 1, row: 0, count: 1).tag] = 9
        #expect(throws: SnapshotRejection.self) { try appendArchived(broken, count: 1, to: &joined) }
        #expect(joined.count == 52)
        #expect(joined.row(at: 51) == second.row(at: 0))
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
