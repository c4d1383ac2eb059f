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

    /// The word-at-a-time check that a column holds one storage class finds a differing tag
    /// wherever it is — in a whole word or in the tail — at every length up to three words.
    @Test func aDifferentTagIsFoundAnywhereInAColumn() {
        for count in 0...24 {
            let same = [UInt8](repeating: CellTag.text, count: count)
            #expect(same.withUnsafeBytes { ColumnBlock.everyByte(of: $0, is: CellTag.text) }, "\(count) tags")
            for place in 0..<count {
                var tags = same
                tags[place] = CellTag.null
                #expect(!tags.withUnsafeBytes { ColumnBlock.everyByte(of: $0, is: CellTag.text) }, "\(count) tags, \(place)")
            }
        }
    }

    /// A schema's fingerprint is made once a process and remembered: asked again, the schema gets
    /// the one its JSON encoding gives; a schema changed in any recorded part gets another.
    @Test func aSchemaKeepsItsFingerprintAndAChangedOneGetsAnother() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let expected = Fingerprint.of(try encoder.encode(schema))
        #expect(SnapshotArchive.fingerprint(schema) == expected)
        #expect(SnapshotArchive.fingerprint(schema) == expected)
        var bumped = schema
        bumped.archiveVersion += 1
        var optional = schema
        optional.attributes[1].isOptional.toggle()
        var indexed = schema
        indexed.indexes.append(EntityIndex(["count"]))
        let changed = [bumped, optional, indexed].map(SnapshotArchive.fingerprint)
        #expect(Set(changed + [expected]).count == 4)
        #expect(SnapshotArchive.fingerprint(schema) == expected)
    }

    private func sampleBlock() throws -> ColumnBlock {
        var block = ColumnBlock(schema: schema)
        for index in 0..<50 {
            try block.append([.text("row-\(index)"), .integer(Int64(index) - 25), .real(Double(index) / 3),
                              index % 3 == 0 ? .null : .text(String(repeating: "é", count: index)),
                              .blob(Data((0..<index).map { UInt8(truncatingIfNeeded: $0) }))] as [DatabaseValue])
        }
        return block
    }

    private func parse(_ bytes: [UInt8], count: Int, arenaSize: Int) throws(StrataError) -> ColumnBlock {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(StrataError) -> ColumnBlock in
                try ColumnBlock(archived: raw, count: count, arenaSize: arenaSize, deferred: nil, schema: schema)
            }
        }
        return try result.get()
    }

    private func parse(_ archived: ColumnBlock.Archived, count: Int) throws(StrataError) -> ColumnBlock {
        try parse(archived.bytes, count: count, arenaSize: archived.arenaSize)
    }

    /// A file holding one section made of `chunks` (each a chunk's bytes, arena size and object
    /// count), each compressed and checksummed as a snapshot writes it, whatever its cells hold.
    private func archive(_ chunks: [(archived: ColumnBlock.Archived, count: Int)]) throws
        -> (file: Data, entry: SnapshotHeader.Entry) {
        let frames = try chunks.map { chunk in try chunk.archived.bytes.withUnsafeBytes { try LZ4Frame.compress($0) } }
        let layout = zip(chunks, frames).map { chunk, frame in
            SnapshotHeader.ChunkLayout(compressed: frame.count, uncompressed: chunk.archived.bytes.count, objects: chunk.count,
                                       arena: chunk.archived.arenaSize, checksum: frame.withUnsafeBytes { XXH64.hash($0) },
                                       deferredCompressed: 0, deferred: 0, deferredChecksum: 0)
        }
        let (header, described) = SnapshotHeader.encode(
            storeID: UUID(), generation: 1, createdAt: Date(), schemaFingerprint: SnapshotArchive.fingerprint([schema]),
            sections: [(schema.name, SnapshotArchive.fingerprint(schema), layout)])
        return (frames.reduce(header, +), try #require(described.entities.first))
    }

    /// What a load makes of the section: its chunks decompressed, checked and joined, in parallel.
    private func load(_ chunks: [(archived: ColumnBlock.Archived, count: Int)]) throws -> ColumnBlock {
        let (file, entry) = try archive(chunks)
        let result = file.withUnsafeBytes { bytes in
            Result { () throws(StrataError) -> LoadedSection in try SnapshotArchive.section(entry, in: bytes, schema: schema) }
        }
        return try result.get().block
    }

    /// Where each attribute's parts start in a chunk of `count` rows, read from its tags as the
    /// format says: the tags, then 8 bytes per integer or real cell, then 4 per text or blob cell.
    private func parts(of bytes: [UInt8], count: Int) -> [(tags: Int, numbers: Int, lengths: Int, end: Int)] {
        var offset = 0
        return schema.attributes.indices.map { _ in
            let tags = Array(bytes[offset..<offset + count])
            let numbers = tags.filter { $0 == CellTag.integer || $0 == CellTag.real }.count
            let texts = tags.filter { $0 >= CellTag.text }.count
            defer { offset += count + 8 * numbers + 4 * texts }
            return (offset, offset + count, offset + count + 8 * numbers, offset + count + 8 * numbers + 4 * texts)
        }
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
        broken.bytes[parts(of: broken.bytes, count: 1)[schema.attributes.count - 1].tags] = 9
        let refused = #expect(throws: StrataError.self) { try load([(first.archived(), first.count), (broken, 1)]) }
        #expect(refused?.snapshotRejection == .undecodable)
        do {
            _ = try load([(first.archived(), first.count), (broken, 1), (first.archived(), first.count)])
            Issue.record("a section with a bad chunk was loaded")
        } catch let rejection as StrataError {
            #expect("\(rejection)".contains("storage class 9"), "\(rejection)")
            #expect(rejection.message.contains("chunk 1"), "the bad chunk is named: \(rejection)")
        }
    }

    /// The arena holds each text and blob cell's bytes in the order of the cells, attribute by
    /// attribute, whatever order the block's own arena holds them in.
    @Test func theArenaFollowsTheCellsOrder() throws {
        var block = ColumnBlock(schema: schema)
        try block.append([.text("b"), .integer(1), .real(0), .text("ccc"), .blob(Data([7, 7]))] as [DatabaseValue])
        try block.append([.text("a"), .integer(2), .real(0), .null, .blob(Data())] as [DatabaseValue])
        let archived = block.archived()
        #expect(archived.arenaSize == 7)
        #expect(Array(archived.bytes.suffix(7)) == Array("ba".utf8) + Array("ccc".utf8) + [7, 7])
        let parsed = try parse(archived, count: 2)
        #expect(parsed.row(at: 0) == block.row(at: 0) && parsed.row(at: 1) == block.row(at: 1))
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

    /// Each case breaks one rule of the format and names the words its rejection must say.
    @Test(arguments: [("unknown tag", "storage class 9"), ("NULL where not optional", "storage class 0"),
                      ("text in an integer attribute", "storage class 3"),
                      ("a whole column of integers in a text attribute", "storage class 1"), ("a byte after the cells", "bytes more than"),
                      ("a length past the arena", "its arena"), ("a length short of the arena", "its arena"),
                      ("cells cut short", "end before"), ("more objects than bytes", "larger than"),
                      ("truncated arena", "its arena"), ("an arena larger than the chunk", "claims an arena")])
    func aChunkBreakingACellRuleIsRefused(_ breakage: String, _ said: String) throws {
        let block = try sampleBlock()
        let archived = block.archived()
        var bytes = archived.bytes, arenaSize = archived.arenaSize
        var count = block.count
        let layout = parts(of: bytes, count: count)
        switch breakage {
        case "unknown tag": bytes[layout[1].tags + 3] = 9
        case "NULL where not optional":
            // The tag made NULL and its value taken out, so that only the tag breaks a rule.
            bytes[layout[1].tags + 3] = CellTag.null
            bytes.removeSubrange((layout[1].numbers + 3 * 8)..<(layout[1].numbers + 4 * 8))
        case "text in an integer attribute": bytes[layout[1].tags + 3] = CellTag.text
        case "a whole column of integers in a text attribute":
            // Every `note` an integer (0), its text bytes taken out of the arena: only the tags
            // break a rule.
            func lengths(_ attribute: Int) -> Int {
                stride(from: layout[attribute].lengths, to: layout[attribute].end, by: 4).reduce(0) { sum, at in
                    sum + Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: at, as: UInt32.self) })
                }
            }
            let notes = bytes.count - arenaSize + lengths(0), noteBytes = lengths(3)
            bytes.removeSubrange(notes..<(notes + noteBytes))
            arenaSize -= noteBytes
            bytes.replaceSubrange(layout[3].lengths..<layout[3].end, with: [UInt8](repeating: 0, count: 8 * count))
            for row in 0..<count { bytes[layout[3].tags + row] = CellTag.integer }
        case "a byte after the cells": bytes.insert(0, at: layout[schema.attributes.count - 1].end)
        case "a length past the arena", "a length short of the arena":
            let length = layout[0].lengths + 5 * 4
            let value = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: length, as: UInt32.self) }
            withUnsafeBytes(of: breakage.contains("past") ? value + 1 : value - 1) { new in
                for (index, byte) in new.enumerated() { bytes[length + index] = byte }
            }
        case "cells cut short":
            let end = layout[schema.attributes.count - 1].end
            bytes.removeSubrange((end - 4)..<end)
        case "more objects than bytes": count = bytes.count
        case "truncated arena":
            bytes.removeLast(100)
            arenaSize -= 100
        case "an arena larger than the chunk": arenaSize = bytes.count + 1
        default: Issue.record("unknown breakage \(breakage)")
        }
        do {
            _ = try parse(bytes, count: count, arenaSize: arenaSize)
            Issue.record("\(breakage): the chunk was accepted")
        } catch {
            #expect("\(error)".contains(said), "\(breakage): \(error)")
        }
    }
}
