import Foundation
import Strata
import StrataCLICore
import StrataTestSupport
import Testing

/// Every kind of bad input prints one clear line on standard error — what and where — and exits
/// with its code: 2 for bad usage, 3 for a bad input file, 1 for a failed check.
@MainActor
@Suite struct ErrorOutputTests {
    private func expectError(_ arguments: [String], code: Int32, _ line: String, _ fixture: ReaderFixture,
                             sourceLocation: SourceLocation = #_sourceLocation) async {
        let result = await runCLI(arguments)
        #expect(result.code == code, "\(arguments)", sourceLocation: sourceLocation)
        #expect(result.output.isEmpty, sourceLocation: sourceLocation)
        // Checksums in a message depend on the bytes the fixture wrote.
        let normalized = result.errorLines.map {
            Golden.normalize($0, directory: fixture.directory).replacingOccurrences(of: "0x[0-9a-f]+", with: "<HEX>",
                                                                                    options: .regularExpression)
        }
        #expect(normalized == [line],
                sourceLocation: sourceLocation)
    }

    @Test func badInputFilesExitWithCode3() async throws {
        let fixture = try await ReaderFixture()
        await expectError(["inspect", fixture.path("missing.sqlite")], code: 3,
                          "strata: error: <DIR>/missing.sqlite: no such file", fixture)
        #expect(!FileManager.default.fileExists(atPath: fixture.path("missing.sqlite")))
        await expectError(["inspect", fixture.directory], code: 3,
                          "strata: error: <DIR>: is a directory, not a store file", fixture)

        let garbage = fixture.path("notes.txt")
        try Data(String(repeating: "not a database ", count: 300).utf8).write(to: URL(fileURLWithPath: garbage))
        await expectError(["inspect", garbage], code: 3, "strata: error: <DIR>/notes.txt: the file is not an SQLite database", fixture)
        await expectError(["query", garbage, "Article"], code: 3,
                          "strata: error: <DIR>/notes.txt: the file is not an SQLite database", fixture)

        let empty = fixture.path("empty.sqlite")
        try Data().write(to: URL(fileURLWithPath: empty))
        await expectError(["check", empty], code: 3,
                          "strata: error: <DIR>/empty.sqlite: an SQLite database but not a Strata store "
                          + "(it has no strata_meta table)", fixture)

        let newer = fixture.path("newer.sqlite")
        do {
            let store = try await Store.open(at: newer, entities: [Feed.self])
            try await store.write { db in try db.execute("UPDATE strata_meta SET value = 7 WHERE key = 'format'") }
            try await store.close()
        }
        await expectError(["inspect", newer], code: 3,
                          "strata: error: <DIR>/newer.sqlite: the store's bookkeeping format is 7; this version of Strata "
                          + "reads format 3 and older", fixture)

        var bytes = try Data(contentsOf: URL(fileURLWithPath: fixture.snapshot))
        bytes[bytes.count - 20] ^= 0x55
        let corrupt = fixture.path("corrupt.snapshot")
        try bytes.write(to: URL(fileURLWithPath: corrupt))
        await expectError(["snapshot", "info", corrupt], code: 3,
                          "strata: error: <DIR>/corrupt.snapshot: the snapshot fails its checksum: the chunk's frame (192 bytes "
                          + "at byte 3887) has XXH64 <HEX>; the header records <HEX>, in Feed's chunk 0 (bytes 3887..<4079)", fixture)
        let truncated = fixture.path("truncated.snapshot")
        try bytes.prefix(100).write(to: URL(fileURLWithPath: truncated))
        await expectError(["snapshot", "info", truncated, "--store", fixture.store], code: 3,
                          "strata: error: <DIR>/truncated.snapshot: the snapshot is truncated: it ends at byte 100, inside its "
                          + "header (261 bytes)", fixture)
        await expectError(["snapshot", "info", fixture.store], code: 3,
                          "strata: error: <DIR>/reader.sqlite: not a Strata snapshot (wrong magic)", fixture)
        await expectError(["snapshot", "info", fixture.path("none.snapshot")], code: 3,
                          "strata: error: <DIR>/none.snapshot: no such file", fixture)
        await expectError(["check", fixture.store, "--snapshot", fixture.path("none.snapshot")], code: 3,
                          "strata: error: <DIR>/none.snapshot: no such snapshot file", fixture)
        await expectError(["vacuum", fixture.path("missing.sqlite")], code: 3,
                          "strata: error: <DIR>/missing.sqlite: no such file", fixture)
    }

    @Test func badUsageExitsWithCode2() async throws {
        let fixture = try await ReaderFixture()
        let store = fixture.store
        await expectError(["query", store, "Post"], code: 2,
                          "strata: error: <DIR>/reader.sqlite: the store has no entity 'Post' (it has: Article, Feed)", fixture)
        await expectError(["query", store, "Article", "--where", "titel CONTAINS 'x'"], code: 2,
                          "strata: error: --where: unknown attribute 'titel' of entity Article (it has: id, feedID, title, "
                          + "summary, url, published, isRead, isStarred) (at column 1)", fixture)
        await expectError(["query", store, "Article", "--where", "isread = true"], code: 2,
                          "strata: error: --where: unknown attribute 'isread' of entity Article (did you mean 'isRead'?) "
                          + "(at column 1)", fixture)
        await expectError(["query", store, "Article", "--where", "isRead = "], code: 2,
                          "strata: error: --where: expected a value after '=', found the end of the expression (at column 10)",
                          fixture)
        await expectError(["query", store, "Article", "--where", "isRead = 'yes'"], code: 2,
                          "strata: error: --where: 'isRead' is true/false; expected true or false, found 'yes' (at column 10)",
                          fixture)
        await expectError(["query", store, "Article", "--where", "feedID = 1 AND (isRead"], code: 2,
                          "strata: error: --where: expected ')', found the end of the expression (at column 23)", fixture)
        await expectError(["query", store, "Feed", "--where", "MATCH 'swift'"], code: 2,
                          "strata: error: --where: entity Feed has no full-text attributes; MATCH needs them (at column 7)",
                          fixture)
        await expectError(["query", store, "Article", "--sort", "rating:desc"], code: 2,
                          "strata: error: --sort: unknown attribute 'rating' of entity Article (it has: id, feedID, title, "
                          + "summary, url, published, isRead, isStarred)", fixture)
        await expectError(["query", store, "Article", "--sort", "published:down"], code: 2,
                          "strata: error: --sort: unknown sort direction 'down' in 'published:down' (use asc or desc)", fixture)
        await expectError(["query", store, "Article", "--sort", "published Descending"], code: 2,
                          "strata: error: --sort: unknown sort direction 'Descending' in 'published Descending' "
                          + "(use asc or desc)", fixture)
        await expectError(["query", store, "Article", "--sort", "published:"], code: 2,
                          "strata: error: --sort: 'published:' has no sort direction after the ':' (asc or desc)", fixture)

        let unknownOption = await runCLI(["inspect", store, "--colour"])
        #expect(unknownOption.code == 2)
        #expect(unknownOption.error.contains("Unknown option '--colour'"))
        let missingArgument = await runCLI(["query", store])
        #expect(missingArgument.code == 2)
        let badLimit = await runCLI(["query", store, "Article", "--limit", "-3"])
        #expect(badLimit.code == 2)
        #expect(badLimit.output.isEmpty)
    }

    @Test func failedChecksExitWithCode1() async throws {
        let fixture = try await ReaderFixture()
        let other = try await ReaderFixture()
        let result = await runCLI(["snapshot", "info", other.snapshot, "--store", fixture.store])
        #expect(result.code == 1)
        let otherStore = "not valid: the snapshot belongs to another store: it was taken from store <UUID>; the database is store <UUID>"
        #expect(Golden.normalize(result.output, directory: fixture.directory).hasSuffix("valid  no — \(otherStore)\n"))
        let check = await runCLI(["check", fixture.store, "--snapshot", other.snapshot])
        #expect(check.code == 1)
        #expect(Golden.normalize(check.output, directory: fixture.directory).contains("  snapshot       FAILED\n    - \(otherStore)\n"))
        #expect(check.output.hasSuffix("1 of 7 checks failed\n"))

        let newest: Int64
        do {
            let store = try await Store.open(at: fixture.store, entities: [Feed.self, Article.self])
            newest = try await store.currentChangeToken().generation
            try await store.write { db in try db.execute("DELETE FROM strata_changes WHERE generation = 2") }
            try await store.close()
        }
        let broken = await runCLI(["check", fixture.store, "--json"])
        #expect(broken.code == 1)
        let report = try JSONSerialization.jsonObject(with: Data(broken.output.utf8)) as? [String: Any]
        #expect(report?["passed"] as? Bool == false)
        let log = (report?["checks"] as? [[String: Any]])?.first { $0["name"] as? String == "change log" }
        #expect(newest > 2)
        #expect(log?["problems"] as? [String] == ["1 generation is missing between 1 and \(newest) (the first is 2)"])
    }
}
