import Foundation
import Strata
import StrataCLICore
import StrataTestSupport
import Testing

/// Runs the built `strata` executable's demo at a small size, as a user would, and checks its
/// final counts against the generated data and the store it left, and that the warm relaunch
/// loaded from the snapshot.
@Suite struct DemoEndToEndTests {
    @Test func smallDemoEndsWithTheExpectedCountsAndAWarmStart() async throws {
        let scratch = try TemporaryDirectory()
        let path = scratch.path("reader.sqlite")
        let arguments = ["demo", "--feeds", "5", "--articles", "500", "--read-elsewhere", "100", "--seed", "3",
                         "--path", path, "--json"]
        let run = try await StrataProcess.run(arguments)
        let output = run.output
        #expect(run.status == 0, "\(run.error)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])

        // What the generated data says the end state must be: 20% arrive read, 100 more are read
        // elsewhere, and the conflict's worker marks one more read; 5 + 1 starred.
        let generator = DataGenerator(seed: 3, feeds: 5, articles: 500)
        let arrivedUnread = (0..<500).filter { !generator.article($0).isRead }.count
        #expect(generator.unreadOnArrival == arrivedUnread)
        let final = try #require(report["final"] as? [String: Int])
        #expect(final == ["feeds": 5, "articles": 500, "unread": arrivedUnread - 100 - 1, "starred": 6])

        // The store agrees.
        let inspector = try StoreInspector(path: path)
        func count(_ filter: Filter) throws -> Int { try inspector.count(InspectionQuery(entity: "Article", where: filter)) }
        #expect(try count(.all) == 500)
        #expect(try count(Attribute("isRead") == false) == final["unread"])
        #expect(try count(Attribute("isStarred") == true) == 6)

        let launches = try #require(report["launches"] as? [String: [String: Any]])
        #expect(launches["warm"]?["outcome"] as? String == "used")
        #expect(launches["warm"]?["usedSnapshot"] as? Bool == true)
        #expect(launches["cold"]?["usedSnapshot"] as? Bool == false)
        #expect(launches["warm"]?["digest"] as? String == launches["cold"]?["digest"] as? String)
        #expect(launches["warm"]?["articles"] as? Int == 500)
        // Three launches of each mode; the one reported is their median.
        for mode in ["warm", "cold"] {
            let runs = try #require(launches[mode]?["runsTimeToDataSeconds"] as? [Double], "\(mode)")
            #expect(runs.count == 3, "\(mode)")
            #expect(launches[mode]?["timeToDataSeconds"] as? Double == runs.sorted()[1], "\(mode): the median")
        }
        #expect(report["passed"] as? Bool == true)
        let steps = try #require(report["steps"] as? [[String: Any]])
        #expect(steps.compactMap { $0["step"] as? Int } == [1, 2, 3, 4, 5, 6, 6, 6])
        #expect(steps.first?["articles"] as? Int == 0, "the first launch starts from an empty store")
        #expect(steps.allSatisfy { ($0["seconds"] as? Double ?? -1) >= 0 })
        #expect(try inspector.snapshotValidity(at: scratch.path("reader.snapshot")) == .current)

        // Rerunnable, and plain lines (no escape codes) when standard output is not a terminal.
        let again = try await StrataProcess.run(Array(arguments.dropLast()))
        let text = again.output
        #expect(again.status == 0, "\(again.error)")
        #expect(text.contains("\n1  First launch\n   no snapshot file → cold start from SQLite: 0 articles on screen"))
        #expect(text.contains("\n7  Summary\n"))
        #expect(text.contains("   ✓ warm launch used the snapshot\n"))
        #expect(!text.contains("\u{1B}["))
        #expect(!text.contains("\r"))
    }

    @Test func demoRefusesToReplaceAFileItDidNotMake() async throws {
        let scratch = try TemporaryDirectory()
        let path = scratch.path("precious.sqlite")
        try Data("my notes".utf8).write(to: URL(fileURLWithPath: path))
        let run = try await StrataProcess.run(["demo", "--feeds", "1", "--articles", "10", "--path", path])
        #expect(run.status == 3)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("my notes".utf8))
    }
}
