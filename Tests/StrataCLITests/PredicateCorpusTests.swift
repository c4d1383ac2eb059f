import Foundation
@_spi(Fuzzing) import StrataCLICore
import StrataTestSupport
import Testing

/// Replays the predicate fuzzer's saved corpus (Fuzz/Corpus/predicate) through the `--where`
/// parser in the normal test run: every input parses or is rejected, never traps.
@Suite struct PredicateCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/predicate")

    @Test func predicateCorpusParsesOrIsRejected() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)
        #expect(files.count >= 5, "the corpus is missing")
        var parsed = 0
        for file in files {
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            if PredicateFuzzing.parse(text) { parsed += 1 }
        }
        #expect(parsed >= 5, "the seed expressions no longer parse")
        print("predicate corpus: \(files.count) inputs, \(parsed) parsed")
    }
}
