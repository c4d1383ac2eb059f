import Foundation
import Strata
import StrataCLICore
import StrataTestSupport
import Testing

/// Golden-output tests of the deterministic commands, run in-process against a fixture store.
@MainActor
@Suite struct GoldenOutputTests {
    @Test func inspect() async throws {
        let fixture = try await ReaderFixture()
        await Golden.expect(["inspect", fixture.store], "inspect.txt", fixture)
        await Golden.expect(["inspect", fixture.store, "--json"], "inspect.json", fixture)
    }

    @Test func queryTableAndJSON() async throws {
        let fixture = try await ReaderFixture()
        await Golden.expect(["query", fixture.store, "Article", "--where", "isRead = false AND feedID IN (1, 2)",
                             "--sort", "published:desc", "--limit", "5"], "query-unread.txt", fixture)
        await Golden.expect(["query", fixture.store, "feeds"], "query-feeds.txt", fixture)
        await Golden.expect(["query", fixture.store, "Article", "--where", "MATCH 'swift*' OR isStarred", "--sort", "id",
                             "--limit", "3", "--json"], "query-search.json", fixture)
        await Golden.expect(["query", fixture.store, "Article", "--where",
                             "published >= '2024-01-01T01:00:00Z' AND NOT isRead", "--sort", "feedID",
                             "--sort", "published desc", "--offset", "2", "--limit", "4"], "query-window.txt", fixture)
    }

    @Test func queryExplainShape() async throws {
        let fixture = try await ReaderFixture()
        let result = await runCLI(["query", fixture.store, "Article", "--where", "feedID = 1 AND isRead = false", "--explain"])
        #expect(result.code == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "SQL        SELECT \"id\", \"feedID\", \"title\", \"summary\", \"url\", \"published\", \"isRead\", "
                + "\"isStarred\" FROM \"articles\" WHERE (\"feedID\" = ? AND \"isRead\" = ?) ORDER BY \"id\" ASC LIMIT ? OFFSET ?")
        #expect(lines.dropFirst().first == "arguments  1, 0, 50, 0")
        #expect(lines.dropFirst(2).first == "QUERY PLAN")
        let plan = lines.dropFirst(3)
        #expect(!plan.isEmpty)
        #expect(plan.allSatisfy { $0.range(of: "^[|` ]*(\\|--|`--)\\S", options: .regularExpression) != nil }, "\(plan)")
        #expect(plan.last?.hasPrefix("`--") == true || plan.last?.contains("`--") == true)
        #expect(plan.contains { $0.contains("USING INDEX articles_feedID_isRead") }, "\(plan)")

        let json = await runCLI(["query", fixture.store, "Article", "--where", "MATCH 'swift'", "--explain", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect((object?["sql"] as? String)?.contains("\"articles_fts\" MATCH ?") == true)
        #expect((object?["plan"] as? [[String: Any]])?.isEmpty == false)
        #expect(object?["arguments"] as? [String] == ["'\"swift\"'", "50", "0"])
    }

    @Test func snapshotInfo() async throws {
        let fixture = try await ReaderFixture()
        await Golden.expect(["snapshot", "info", fixture.snapshot], "snapshot-info.txt", fixture)
        await Golden.expect(["snapshot", "info", fixture.snapshot, "--store", fixture.store, "--json"], "snapshot-info.json",
                            fixture)
    }

    @Test func check() async throws {
        let fixture = try await ReaderFixture()
        await Golden.expect(["check", fixture.store, "--snapshot", fixture.snapshot], "check.txt", fixture)
    }

    @Test func vacuum() async throws {
        let fixture = try await ReaderFixture()
        let result = await runCLI(["vacuum", fixture.store, "--json"])
        #expect(result.code == 0, "\(result.error)")
        let report = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        let before = report?["bytesBefore"] as? Int, after = report?["bytesAfter"] as? Int
        #expect(before != nil && after != nil && report?["bytesReclaimed"] as? Int == before! - after!)
        // Vacuuming keeps every row and the snapshot's validity.
        let check = await runCLI(["check", fixture.store, "--snapshot", fixture.snapshot])
        #expect(check.code == 0, "\(check.output)")
        let text = await runCLI(["vacuum", fixture.store])
        #expect(text.output.hasPrefix("vacuum \(fixture.store)\n  checkpoint  "))
    }

    @Test func helpAndCompletions() async throws {
        let help = await runCLI(["--help"])
        #expect(help.code == 0)
        #expect(help.output.contains("Examples:"))
        for command in ["demo", "inspect", "query", "snapshot", "check", "vacuum"] {
            #expect(help.output.contains("  \(command)"), "\(command) is listed")
        }
        #expect(!help.output.contains("demo-launch"))
        let query = await runCLI(["query", "--help"])
        #expect(query.code == 0)
        #expect(query.output.contains("--where syntax"))
        let completion = await runCLI(["--generate-completion-script", "bash"])
        #expect(completion.code == 0)
        #expect(completion.output.contains("_strata"))
    }
}
