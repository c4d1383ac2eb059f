import Foundation
import Strata
import StrataCLICore
import StrataTestSupport
import Testing

/// `check` on a damaged store: a failed check (exit code 1) with SQLite's integrity report
/// indented under its heading — never an unreadable-input error, as long as the file is SQLite.
@MainActor
@Suite struct DamagedStoreTests {
    private func truncated(_ fixture: ReaderFixture, by bytes: Int) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.store))
        let path = fixture.path("damaged.sqlite")
        try data.prefix(data.count - bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Every line of the report but its first and last is indented under `check PATH`, and each
    /// line of a multi-line problem is indented under the problem's first line.
    private func expectIndented(_ output: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(lines.dropFirst().dropLast().allSatisfy { $0.hasPrefix("  ") }, "\(output)", sourceLocation: sourceLocation)
        let heading = lines.firstIndex { $0.hasPrefix("    - *** in database ") }
        #expect(heading != nil, "SQLite's integrity report: \(output)", sourceLocation: sourceLocation)
        if let heading {
            let finding = lines[heading + 1]
            #expect(finding.hasPrefix("      ") && finding.count > 6, "a finding under the heading: \(output)",
                    sourceLocation: sourceLocation)
        }
    }

    /// A store whose `articles_published` index lost its root page (zeroed): SQLite opens it, and
    /// its integrity report spans several lines — a heading, then the findings.
    @Test func integrityReportIsIndentedUnderItsHeading() async throws {
        let fixture = try await ReaderFixture()
        let root: Int
        do {
            let store = try await Store.open(at: fixture.store, entities: [Feed.self, Article.self])
            let value = try await store.read { db in
                try db.value("SELECT rootpage FROM sqlite_master WHERE name = 'articles_published'")
            }
            root = try #require(Int.fromDatabaseValue(value ?? .null))
            try await store.close()
        }
        let pageSize = try StoreInspector(path: fixture.store).fileSizes().pageSize
        var data = try Data(contentsOf: URL(fileURLWithPath: fixture.store))
        data.replaceSubrange((root - 1) * pageSize..<root * pageSize, with: Data(count: pageSize))
        let damaged = fixture.path("damaged.sqlite")
        try data.write(to: URL(fileURLWithPath: damaged))

        let result = await runCLI(["check", damaged])
        #expect(result.code == ExitStatus.failure)
        #expect(result.error.isEmpty)
        #expect(result.output.hasPrefix("check \(damaged)\n  integrity      FAILED\n    - *** in database main ***\n      "))
        #expect(result.output.contains("\n  entity tables  ok      2 entities match their recorded schemas\n"))
        expectIndented(result.output)
    }

    /// A store cut in half is shorter than its header says, and SQLite refuses to read anything
    /// from it; the check still judges it, and fails.
    @Test func truncatedStoreIsAFailedCheck() async throws {
        let fixture = try await ReaderFixture()
        let size = try Data(contentsOf: URL(fileURLWithPath: fixture.store)).count
        let damaged = try truncated(fixture, by: size / 2)
        let result = await runCLI(["check", damaged, "--snapshot", fixture.snapshot])
        #expect(result.code == ExitStatus.failure, "\(result.error)")
        #expect(result.error.isEmpty)
        #expect(result.output.hasPrefix("check \(damaged)\n  integrity      FAILED\n"))
        #expect(result.output.contains("\n  change log     FAILED\n    - not checked: the store's bookkeeping cannot be "
                                       + "read (database disk image is malformed)\n"))
        #expect(result.output.hasSuffix("\n7 of 7 checks failed\n"))
        expectIndented(result.output)

        let json = await runCLI(["check", damaged, "--json"])
        #expect(json.code == ExitStatus.failure)
        let report = try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any]
        #expect(report?["passed"] as? Bool == false)
        let names = (report?["checks"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["integrity", "foreign keys", "change log", "history", "entity tables", "stored values"])

        // The other commands still refuse it as unreadable input, and nothing was written to it.
        let inspect = await runCLI(["inspect", damaged])
        #expect(inspect.code == ExitStatus.badInput)
        #expect(try Data(contentsOf: URL(fileURLWithPath: damaged)).count == size - size / 2)
    }
}
