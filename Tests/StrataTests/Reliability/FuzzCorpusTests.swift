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

    @Test func snapshotCorpusDecodesOrIsRejected() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)
        #expect(files.count >= 10, "the corpus is missing")
        var decoded = 0, rejected: [SnapshotRejection: Int] = [:]
        for file in files {
            let data = try Data(contentsOf: file)
            switch data.withUnsafeBytes({ SnapshotFuzzing.decode($0, entities: [FuzzArticle.self, FuzzTag.self]) }) {
            case .success: decoded += 1
            case .failure(let rejection): rejected[rejection, default: 0] += 1
            }
        }
        #expect(decoded >= 1, "the valid seed no longer decodes")
        #expect(decoded + rejected.values.reduce(0, +) == files.count)
        print("fuzz corpus: \(files.count) inputs, \(decoded) decoded, rejected \(rejected)")
    }

    @Test func seedIsAValidSnapshotOfFourObjects() throws {
        let seed = try Data(contentsOf: Self.corpus.appendingPathComponent("seed-valid.snapshot"))
        let result = seed.withUnsafeBytes { SnapshotFuzzing.decode($0, entities: [FuzzArticle.self, FuzzTag.self]) }
        #expect(try result.get() == 4)
    }
}
