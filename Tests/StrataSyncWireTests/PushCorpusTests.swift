import Foundation
@_spi(Fuzzing) import StrataSyncWire
import Testing

/// Replays the push fuzzer's saved corpus (Fuzz/Corpus/push) in the normal test run: each input
/// is accepted or refused with the protocol's typed error, never anything else.
@Suite struct PushCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/push")

    @Test func everyInputIsAcceptedOrRefusedWithAType() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.corpus, includingPropertiesForKeys: nil)
        #expect(files.count >= 4, "the corpus is missing")
        var outcomes: [PushFuzzing.Outcome] = []
        for file in files {
            let outcome = PushFuzzing.check(try Data(contentsOf: file))
            if case .broken(let reason) = outcome { Issue.record("\(file.lastPathComponent): \(reason)") }
            outcomes.append(outcome)
        }
        #expect(outcomes.contains(.accepted), "the valid seeds no longer decode")
        #expect(outcomes.contains(.refused(.typeMismatch)))
    }
}
