import Foundation
import Strata
import StrataCLICore
import StrataTestSupport
import Testing

/// The reading commands never modify the files they are asked to read: the store, its WAL (when
/// there is one) and the snapshot keep their bytes and modification dates. (Like any SQLite
/// reader of a WAL-mode file, a read-only open creates the empty `-wal` and `-shm` companions when
/// they are missing; that is checked too: empty, with the database untouched.)
@MainActor
@Suite struct ReadOnlyTests {
    @Test func readingCommandsLeaveTheirFilesAlone() async throws {
        let fixture = try await ReaderFixture()
        let files = [fixture.store, fixture.snapshot]
        let before = files.map(FileState.init)
        #expect(!FileManager.default.fileExists(atPath: fixture.store + "-wal"), "the fixture's store was closed cleanly")
        let commands: [[String]] = [
            ["inspect", fixture.store],
            ["inspect", fixture.store, "--json"],
            ["query", fixture.store, "Article", "--where", "MATCH 'swift' AND NOT isRead", "--sort", "published:desc"],
            ["query", fixture.store, "Article", "--where", "feedID = 2", "--explain"],
            ["query", fixture.store, "Feed", "--all", "--json"],
            ["snapshot", "info", fixture.snapshot],
            ["snapshot", "info", fixture.snapshot, "--store", fixture.store],
            ["check", fixture.store],
            ["check", fixture.store, "--snapshot", fixture.snapshot],
        ]
        for command in commands {
            let result = await runCLI(command)
            #expect(result.code == 0, "\(command): \(result.error)")
            #expect(files.map(FileState.init) == before, "\(command) changed a file it read")
        }
        // Failing reads leave files alone too, and never create one.
        let failing: [[String]] = [
            ["query", fixture.store, "Article", "--where", "nope = 1"],
            ["inspect", fixture.path("absent.sqlite")],
            ["snapshot", "info", fixture.snapshot, "--store", fixture.path("absent.sqlite")],
        ]
        for command in failing {
            let result = await runCLI(command)
            #expect(result.code != 0)
            #expect(files.map(FileState.init) == before, "\(command) changed a file it read")
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.path("absent.sqlite")))
        #expect(FileState(fixture.store + "-wal").bytes == Data(), "a reader's WAL companion stays empty")
    }

    /// While an app holds the store open with changes still in its WAL, inspecting reads them
    /// without checkpointing: neither the database file nor the WAL changes.
    @Test func readingAStoreInUseLeavesItsWALAlone() async throws {
        let fixture = try await ReaderFixture()
        let store = try await Store.open(at: fixture.store, entities: [Feed.self, Article.self])
        try store.updateAll(Article.self, ids: ["a-000001", "a-000002"], set: ["isRead": true])
        try await store.persist()
        let generation = try await store.currentChangeToken().generation
        let files = [fixture.store, fixture.store + "-wal"]
        let before = files.map(FileState.init)
        #expect(before[1].bytes?.isEmpty == false, "the change is in the WAL")
        let inspect = await runCLI(["inspect", fixture.store, "--json"])
        #expect(inspect.code == 0)
        #expect(inspect.output.contains("\"generation\": \(generation)"), "the WAL's last commit is shown")
        let query = await runCLI(["query", fixture.store, "Article", "--where", "id IN ('a-000001', 'a-000002') AND isRead",
                                  "--json"])
        #expect(query.output.contains("\"matching\": 2"))
        let check = await runCLI(["check", fixture.store])
        #expect(check.code == 0)
        #expect(files.map(FileState.init) == before)
        try await store.close()
    }
}
