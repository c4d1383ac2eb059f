import Foundation
@_spi(Testing) import Strata
import StrataTestSupport
import Testing

/// Must match the entities of Fuzz/Sources/FuzzSnapshot (same names and attributes), so that
/// the corpus decodes the way the fuzzer saw it.
struct FuzzArticle: Entity {
    var id: String
    var feedID: Int64
    var title: String
    var summary: String?
    var published: Date
    var isRead: Bool
    var score: Double
    var tags: [String]
    static let isResident = true
    static let deferredAttributes = ["summary", "tags"]
}

struct FuzzTag: Entity {
    var id: Int64
    var name: String
    var data: Data
    static let isResident = true
}

/// Replays the fuzzer's saved corpus (Fuzz/Corpus/snapshot) through the snapshot decoder in the
/// normal test run, so CI keeps every input the fuzzer ever found interesting: each must decode
/// or be rejected with a reason, never trap.
@Suite struct FuzzCorpusTests {
    static let corpus = repositoryRoot().appendingPathComponent("Fuzz/Corpus/snapshot")

    /// Each input as it is and with its checksums repaired, as the fuzzer decodes it.
    @Test func snapshotCorpusDecodesOrIsRejected() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)
        #expect(files.count >= 10, "the corpus is missing")
        var decoded = 0, rejected: [SnapshotRejection: Int] = [:]
        for file in files {
            let data = try Data(contentsOf: file)
            for input in [data, SnapshotFuzzing.repairingChecksums(data)] {
                switch input.withUnsafeBytes({ SnapshotFuzzing.decode($0, entities: [FuzzArticle.self, FuzzTag.self]) }) {
                case .success: decoded += 1
                case .failure(let error):
                    guard let rejection = error.snapshotRejection else {
                        Issue.record("\(file.lastPathComponent): refused without a reason: \(error)")
                        continue
                    }
                    rejected[rejection, default: 0] += 1
                }
            }
        }
        #expect(decoded >= 2, "the valid seed no longer decodes")
        #expect(decoded + rejected.values.reduce(0, +) == 2 * files.count)
        print("fuzz corpus: \(files.count) inputs, each as is and repaired: \(decoded) decoded, rejected \(rejected)")
    }

    /// What the fuzzer's repair is for: a changed byte in a chunk (either of its frames) is refused
    /// by its checksum as it is, and reaches decompression and the cell checks once the
    /// checksums are rewritten;
    /// an intact archive is left as it is.
    @Test func repairedChecksumsLetAChangedChunkReachTheDecoder() throws {
        let path = Self.corpus.appendingPathComponent("seed-valid.snapshot")
        let seed = try Data(contentsOf: path)
        #expect(SnapshotFuzzing.repairingChecksums(seed) == seed)
        let header = try Snapshot.readHeader(at: path.path)
        let entities: [any Entity.Type] = [FuzzArticle.self, FuzzTag.self]
        var reached = 0
        for chunk in header.entities.flatMap({ $0.chunks }) {
            for position in chunk.offset..<chunk.end {   // its frame, and its deferred frame when it has one
                var changed = seed
                changed[position] ^= 0x01
                let asIs = changed.withUnsafeBytes { SnapshotFuzzing.decode($0, entities: entities) }
                #expect(asIs.rejection == .checksumMismatch, "byte \(position): \(asIs)")
                let repaired = SnapshotFuzzing.repairingChecksums(changed)
                if repaired.withUnsafeBytes({ SnapshotFuzzing.decode($0, entities: entities) }).rejection != .checksumMismatch {
                    reached += 1
                }
            }
        }
        #expect(reached > 0, "no repaired change got past the checksums")
    }

    /// A header with a good CRC whose chunk claims more than LZ4 can make of its bytes is refused
    /// before anything is allocated for it (the fuzzer found a loader asking for terabytes; its
    /// input is in the corpus as `crash-77cb06a4…`).
    @Test func aChunkClaimingMoreThanItsBytesCanHoldIsRefused() throws {
        let path = Self.corpus.appendingPathComponent("seed-valid.snapshot")
        let seed = try Data(contentsOf: path)
        let chunk = try #require(try Snapshot.readHeader(at: path.path).entities.first?.chunks.first)
        // The size, the object count and the arena's size, one after the other in the chunk table.
        let field = [chunk.uncompressedSize, chunk.objectCount, chunk.arenaSize]
            .reduce(Data()) { field, size in withUnsafeBytes(of: UInt64(size).littleEndian) { field + Data($0) } }
        let places = (0...(chunk.offset - field.count)).filter { seed[$0..<($0 + field.count)] == field }
        let place = try #require(places.count == 1 ? places.first : nil, "the size is at \(places) in the header")
        for claimed in [chunk.compressedSize * 256 + 1, 1 << 40, Int(Int64.max)] {
            var crafted = seed
            withUnsafeBytes(of: UInt64(claimed).littleEndian) { crafted.replaceSubrange(place..<(place + 8), with: $0) }
            crafted = SnapshotFuzzing.repairingChecksums(crafted)
            let result = crafted.withUnsafeBytes { SnapshotFuzzing.decode($0, entities: [FuzzArticle.self, FuzzTag.self]) }
            guard case .failure(let error) = result, error.snapshotRejection == .undecodable else {
                Issue.record("a chunk claiming \(claimed) bytes: \(result)")
                continue
            }
            let reason = error.message
            #expect(reason.contains("claims \(claimed) decompressed"), "\(reason)")
        }
    }

    @Test func seedIsAValidSnapshotOfFourObjects() throws {
        let seed = try Data(contentsOf: Self.corpus.appendingPathComponent("seed-valid.snapshot"))
        let result = seed.withUnsafeBytes { SnapshotFuzzing.decode($0, entities: [FuzzArticle.self, FuzzTag.self]) }
        #expect(try result.get() == 4)
    }
}
