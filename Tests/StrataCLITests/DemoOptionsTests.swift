import Foundation
import Strata
@testable import StrataCLICore
import StrataTestSupport
import Testing

/// The demo's options: where its store goes, what it refuses up front, small runs that still
/// show every step, and what Ctrl-C says.
@Suite struct DemoOptionsTests {
    /// The default store is under `$HOME`, as `~` in the help promises — not the account's home
    /// directory from the user database.
    @Test func defaultStoreIsUnderHOME() async throws {
        let scratch = try TemporaryDirectory()
        let home = scratch.url.path
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home
        environment["XDG_DATA_HOME"] = nil
        let run = try await StrataProcess.run(["demo", "--feeds", "2", "--articles", "30", "--json"], environment: environment)
        #expect(run.status == 0, "\(run.error)")
        let report = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
        #if os(macOS)
        let expected = home + "/Library/Application Support/strata/demo.sqlite"
        #else
        let expected = home + "/.local/share/strata/demo.sqlite"
        #endif
        #expect(report?["store"] as? String == expected)
        #expect(FileManager.default.fileExists(atPath: expected))
    }

    /// A `--path` in a missing directory is refused before anything runs, naming the directory.
    @Test func missingDirectoryIsRefusedUpFront() async throws {
        let scratch = try TemporaryDirectory()
        let missing = scratch.path("not-there")
        let result = await runCLI(["demo", "--articles", "30", "--path", missing + "/reader.sqlite"])
        #expect(result.code == ExitStatus.usage)
        #expect(result.output.isEmpty, "nothing runs: \(result.output)")
        #expect(result.errorLines == ["strata: error: --path \(missing)/reader.sqlite: the directory \(missing) does not "
                                      + "exist; create it or pass another --path"])
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// Options that would leave step 3 or step 4 nothing to do are refused, with the limit that
    /// the seed's data allows; the limit itself is accepted. The unread count is taken from the
    /// articles themselves, independently of the validation's own count.
    @Test func optionsThatLeaveAStepEmptyAreRefused() throws {
        let generator = DataGenerator(seed: 42, feeds: 100, articles: 5_000)
        let unread = (0..<5_000).filter { !generator.article($0).isRead }.count
        #expect(throws: Never.self) {
            _ = try DemoCommand.parse(["--articles", "5000", "--read-elsewhere", String(unread - 2)])
        }
        do {
            _ = try DemoCommand.parse(["--articles", "5000", "--read-elsewhere", String(unread - 1)])
            Issue.record("--read-elsewhere \(unread - 1) leaves one unread article and should be refused")
        } catch {
            #expect(DemoCommand.message(for: error) == "--read-elsewhere \(unread - 1) would leave too few unread articles "
                    + "for the merge conflict in step 4: with --articles 5000 and --seed 42, \(Format.count(unread)) articles "
                    + "arrive unread, and the conflict needs 2; use --read-elsewhere \(unread - 2) or less")
        }
        for arguments in [["--articles", "2"], ["--articles", "100", "--read-elsewhere", "0"]] {
            #expect(throws: (any Error).self, "\(arguments)") { _ = try DemoCommand.parse(arguments) }
        }
        // The default scales with the articles: 5,000 articles are no longer all marked read.
        #expect(throws: Never.self) { _ = try DemoCommand.parse(["--articles", "5000"]) }
    }

    /// Small runs demonstrate every step: step 3 marks a tenth of the articles read by default,
    /// and the merge conflict happens (its report is not empty).
    @Test(arguments: [3, 12, 40])
    func smallRunsShowEveryStep(articles: Int) async throws {
        let generator = DataGenerator(seed: 3, feeds: 2, articles: articles)
        let unread = (0..<articles).filter { !generator.article($0).isRead }.count
        try #require(unread >= 3, "seed 3 gives the demo enough unread articles")
        let scratch = try TemporaryDirectory()
        let run = try await StrataProcess.run(["demo", "--feeds", "2", "--articles", String(articles), "--seed", "3",
                                         "--path", scratch.path("reader.sqlite"), "--json"])
        #expect(run.status == 0, "\(run.error)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        let readElsewhere = max(1, articles / 10)
        let steps = try #require(report["steps"] as? [[String: Any]])
        let bulk = steps.first { $0["step"] as? Int == 3 }?["details"] as? [String: Any]
        #expect(bulk?["rows"] as? Int == readElsewhere)
        let conflict = try #require(report["conflict"] as? [String: Any])
        #expect(conflict["article"] is String, "the merge conflict happened: \(conflict)")
        #expect(conflict["titleFromMain"] as? Bool == true)
        #expect(conflict["isRead"] as? Bool == true)
        let final = report["final"] as? [String: Int]
        #expect(final?["unread"] == unread - readElsewhere - 1)
        #expect(report["passed"] as? Bool == true)
    }

    /// Counts of one read in the singular.
    @Test func oneArticleReadElsewhereIsSingular() async throws {
        let scratch = try TemporaryDirectory()
        let run = try await StrataProcess.run(["demo", "--feeds", "1", "--articles", "12", "--seed", "3",
                                         "--path", scratch.path("reader.sqlite")])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("\n1  First launch\n   no snapshot file → cold start from SQLite: 0 articles on screen"))
        #expect(run.output.hasPrefix("Strata demo: an offline RSS reader — 1 feed, 12 articles, seed 3\n"))
        #expect(run.output.contains("\n3  Sync API: 1 article was read elsewhere\n   one bulk update of 1 row: "))
        #expect(run.output.contains("imported 1 feed and 12 articles in "))
    }

    /// Ctrl-C during the import ends with status 130 and says how many articles were committed —
    /// exactly what the store file then holds. The test waits for the import's first progress
    /// line (printed at each quarter when output is not a terminal), then sends SIGINT while the
    /// other three quarters are still to come.
    @Test func ctrlCDuringTheImportSaysWhatWasCommitted() throws {
        let scratch = try TemporaryDirectory()
        let path = scratch.path("reader.sqlite")
        let demo = try StrataProcess(["demo", "--feeds", "5", "--articles", "60000", "--path", path])
        let importing = demo.readOutput { $0.contains("/60,000 articles") }
        #expect(importing, "the import's progress was printed")
        demo.interrupt()
        let result = try demo.finish()
        #expect(result.status == ExitStatus.interrupted)
        #expect(!result.output.contains("\n3  "), "the demo stopped in step 2")
        let report = try Regex("strata: interrupted in step 2 of 7: ([0-9,]+) of 60,000 articles (?:was|were) "
                               + "committed to (.+); the next run starts over\n")
        let match = try #require(result.error.wholeMatch(of: report), "\(result.error)")
        let committed = try #require(match.output[1].substring.flatMap { Int($0.replacingOccurrences(of: ",", with: "")) })
        #expect(match.output[2].substring.map(String.init) == path)
        #expect(committed < 60_000)
        let inspector = try StoreInspector(path: path)
        #expect(try inspector.count(InspectionQuery(entity: "Article")) == committed)
    }
}
