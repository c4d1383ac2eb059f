import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// One attribute of each storage class, and optional ones.
private struct BatchRow: Entity {
    var id: Int64
    var title: String
    var score: Double
    var payload: Data
    var note: String?
    var rank: Int?
}

/// Text keys, so that indexing them reads each key's bytes in the block's arena.
private struct TextKeyedRow: Entity {
    var id: String
    var rank: Int64
}

/// A statement's row as a test makes it: cells with their bytes borrowed (as `Statement.cell(at:)`
/// gives them), and values read as `Statement.value(at:)` reads them (text repaired as a
/// `String` repairs it).
private final class CellsRow: CellSource, RowSource {
    enum Cell { case null, integer(Int64), real(Double), text([UInt8]), blob([UInt8]) }
    private let cells: [Cell]
    private let bytes: [UnsafeMutableRawBufferPointer?]

    init(_ cells: [Cell]) {
        self.cells = cells
        bytes = cells.map { cell in
            switch cell {
            case .text(let bytes), .blob(let bytes):
                let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
                buffer.copyBytes(from: bytes)
                return buffer
            default: return nil
            }
        }
    }

    deinit { for buffer in bytes { buffer?.deallocate() } }

    func cell(at position: Int) -> RawCell {
        switch cells[position] {
        case .null: .null
        case .integer(let integer): .integer(integer)
        case .real(let real): .real(real)
        case .text(let text): .text(UnsafeRawBufferPointer(rebasing: bytes[position]![0..<text.count]))
        case .blob(let blob): .blob(UnsafeRawBufferPointer(rebasing: bytes[position]![0..<blob.count]))
        }
    }

    func value(at position: Int) -> DatabaseValue {
        switch cells[position] {
        case .null: .null
        case .integer(let integer): .integer(integer)
        case .real(let real): .real(real)
        case .text(let text): .text(String(decoding: text, as: UTF8.self))
        case .blob(let blob): .blob(Data(blob))
        }
    }

    var values: [DatabaseValue] { cells.indices.map(value(at:)) }
}

/// A fetch's rows go from a statement into a `CellBatch` (checked as taken) and from batches
/// into a block (`ColumnBlock.append(_:)`, keys indexed): what the block holds must be what
/// appending each row's values holds, and a bad row or a repeated key is refused.
@Suite struct CellBatchTests {
    private let schema: EntitySchema

    init() throws { schema = try SchemaRegistry([BatchRow.self]).schema(for: BatchRow.self) }

    private func row(_ id: Int64, title: [UInt8], score: Double = 0.5, payload: [UInt8] = [1, 2],
                     note: CellsRow.Cell = .null, rank: CellsRow.Cell = .null) -> CellsRow {
        // In the schema's attribute order: id, title, score, payload, note, rank.
        CellsRow([.integer(id), .text(title), .real(score), .blob(payload), note, rank])
    }

    @Test func rowsTakenInBatchesAreTheRowsAppendedOneByOne() throws {
        var (random, seed) = SeededRandom.forTest(#function)
        let words: [[UInt8]] = ["", "a", "café ✓", "nul\u{0}byte", "\u{1F600}", String(repeating: "long ", count: 40)]
            .map { Array($0.utf8) } + [[0x61, 0xFF, 0x62]]   // the last is not UTF-8: repaired
        // A tiny byte capacity, so that the batch's bytes move as they grow.
        let batch = CellBatch(schema: schema, capacity: 7, bytes: 4)
        var batched = ColumnBlock(schema: schema)
        var oneByOne = ColumnBlock(schema: schema)
        let count = 30 + random.next(40)
        for id in 0..<count {
            let title = words[random.next(words.count)]
            let note: CellsRow.Cell = random.next(3) == 0 ? .null : .text(words[random.next(words.count)])
            let rank: CellsRow.Cell = random.next(2) == 0 ? .null : .integer(Int64(random.next(1_000)) - 500)
            let payload = (0..<random.next(20)).map { _ in UInt8(random.next(256)) }
            let row = row(Int64(id * 7), title: title, score: Double(random.next(1_000)) / 8, payload: payload,
                          note: note, rank: rank)
            try batch.append(row)
            try oneByOne.append(row.values)
            if batch.isFull {
                try batched.append(batch)
                batch.removeAll()
            }
        }
        try batched.append(batch)
        #expect(batched.count == count, "seed \(seed)")
        for index in 0..<count {
            #expect(batched.row(at: index) == oneByOne.row(at: index), "seed \(seed): row \(index)")
            #expect(batched.row(ofKey: .integer(Int64(index * 7))) == index, "seed \(seed): key of row \(index)")
        }
        #expect(batched.row(ofKey: .integer(1)) == nil)
    }

    @Test func aRowItsAttributesDoNotAdmitIsRefusedAndTheBatchIsAsBefore() throws {
        let batch = CellBatch(schema: schema, capacity: 4)
        try batch.append(row(1, title: Array("kept".utf8)))
        let bytes = batch.arenaBytes.count
        // Text in `rank`, an integer attribute: after `title`'s bytes were copied.
        let bad = row(2, title: Array("dropped".utf8), rank: .text(Array("seven".utf8)))
        #expect {
            try batch.append(bad)
        } throws: { error in
            let error = try #require(error as? StrataError)
            return error.message.contains("rank") && error.objectID == "2"
        }
        #expect(batch.count == 1)
        #expect(batch.arenaBytes.count == bytes, "the refused row's bytes were dropped")
        // NULL in `title`, which is not optional.
        #expect(throws: StrataError.self) { try batch.append(CellsRow([.integer(3), .null, .real(0), .blob([]), .null, .null])) }
        try batch.append(row(4, title: Array("next".utf8)))
        var block = ColumnBlock(schema: schema)
        try block.append(batch)
        #expect(block.count == 2)
        #expect(block.row(at: 1)[1] == .text("next"))
        #expect(block.row(at: 0)[1] == .text("kept"))
    }

    @Test func aKeyHeldTwiceIsRefusedWithinABatchAndAcrossBatches() throws {
        let batch = CellBatch(schema: schema, capacity: 4)
        try batch.append(row(1, title: []))
        try batch.append(row(1, title: []))
        var block = ColumnBlock(schema: schema)
        #expect {
            try block.append(batch)
        } throws: { error in
            (error as? StrataError)?.message.contains("primary key") == true
        }
        batch.removeAll()
        var other = ColumnBlock(schema: schema)
        try batch.append(row(5, title: []))
        try other.append(batch)
        batch.removeAll()
        try batch.append(row(6, title: []))
        try batch.append(row(5, title: []))
        #expect(throws: StrataError.self) { try other.append(batch) }
    }

    /// A block's keys are indexed a page of cells at a time (4,096 rows a page): batches that
    /// start and end anywhere in a page, text keys of every length (under and over a hash word),
    /// and every key found at its row afterwards.
    @Test func textKeysTakenInBatchesAcrossPageSeamsAreEachFoundAtTheirRow() throws {
        var (random, seed) = SeededRandom.forTest(#function)
        let schema = try SchemaRegistry([TextKeyedRow.self]).schema(for: TextKeyedRow.self)
        let keys = (0..<10_000).map { index in
            String(repeating: "k", count: random.next(12)) + "-\(index)"
        }
        var block = ColumnBlock(schema: schema)
        var next = 0
        while next < keys.count {
            let batch = CellBatch(schema: schema, capacity: 1 + random.next(3_000))
            while !batch.isFull && next < keys.count {
                try batch.append(CellsRow([.text(Array(keys[next].utf8)), .integer(Int64(next))]))
                next += 1
            }
            try block.append(batch)
        }
        #expect(block.count == keys.count, "seed \(seed)")
        for (row, key) in keys.enumerated() {
            #expect(block.row(ofKey: .text(key)) == row, "seed \(seed): key \(key)")
        }
        // Absent keys the generator cannot make (its indexes stop below keys.count; "-1" may be
        // a key, when index 1 got no prefix).
        #expect(block.row(ofKey: .text("-\(keys.count)")) == nil, "seed \(seed)")
        #expect(block.row(ofKey: .text("k")) == nil, "seed \(seed)")
    }

    /// A key held twice is refused wherever the second copy is: here on the third page, in a
    /// batch that starts on the second.
    @Test func aTextKeyHeldAgainOnALaterPageIsRefusedWithTheKey() throws {
        let schema = try SchemaRegistry([TextKeyedRow.self]).schema(for: TextKeyedRow.self)
        var block = ColumnBlock(schema: schema)
        let first = CellBatch(schema: schema, capacity: 5_000)
        for index in 0..<5_000 { try first.append(CellsRow([.text(Array("article-\(index)".utf8)), .integer(0)])) }
        try block.append(first)
        let second = CellBatch(schema: schema, capacity: 4_000)
        for index in 5_000..<8_500 { try second.append(CellsRow([.text(Array("article-\(index)".utf8)), .integer(0)])) }
        try second.append(CellsRow([.text(Array("article-10".utf8)), .integer(1)]))
        #expect {
            try block.append(second)
        } throws: { error in
            let error = try #require(error as? StrataError)
            return error.message.contains("primary key") && error.objectID?.contains("article-10") == true
        }
    }
}
