import Foundation
import Strata
import StrataCLICore
import StrataTestSupport
import Testing

/// `strata history`: the transactions of a store the reader fixture made and then changed in
/// every way the history records — a worker's save under its name, a save with an author, a bulk
/// delete by filter, an outside writer's update.
@MainActor
@Suite struct HistoryCommandTests {
    /// The fixture's store (tokens 2 and 3: one insert of 3 feeds and 24 articles, a bulk update
    /// by IDs, without authors), then:
    /// - token 4, "importer": a worker renames a-000005 and flips its `isRead` (an update naming
    ///   exactly those two attributes); token 5, "main": the main context inserts feed 4;
    /// - token 6, "sync": a worker deletes a-000006;
    /// - token 7, "cleanup": a bulk delete by filter of feed 3's articles (10 IDs, abbreviated);
    /// - token 8, outside: `Store.write` marks a-000007 read.
    private func changedStore() async throws -> ReaderFixture {
        let fixture = try await ReaderFixture()
        let store = try await Store.open(at: fixture.store, entities: [Feed.self, Article.self])
        let importer = store.makeWorkerContext(name: "importer")
        var article = try #require(try await importer.fetch(Query<Article>(where: Attribute("id") == "a-000005")).first)
        article.title = "Renamed"
        article.isRead = !article.isRead
        try await importer.update(article)
        try await importer.save()
        try store.mainContext.insert(Feed(id: 4, title: "Added", url: URL(string: "https://example.com/4")!, category: "News"))
        try store.mainContext.save()
        let sync = store.makeWorkerContext(name: "worker")
        try await sync.delete(Article.self, id: "a-000006")
        try await sync.save(author: "sync")
        try store.deleteAll(Article.self, where: Attribute("feedID") == 3, author: "cleanup")
        try await store.persist()
        try await store.write { db in try db.execute("UPDATE articles SET isRead = 1 WHERE id = 'a-000007'") }
        try await store.close()
        return fixture
    }

    @Test func listsInsertsUpdatesDeletesBulkAndOutsideWrites() async throws {
        let fixture = try await changedStore()
        await Golden.expect(["history", fixture.store], "history.txt", fixture)
        await Golden.expect(["history", fixture.store, "--json"], "history.jsonl", fixture)
    }

    /// Each line of `--json` is one transaction's object, whole: every ID, the changed attributes.
    @Test func jsonIsOneObjectPerLine() async throws {
        let fixture = try await changedStore()
        let result = await runCLI(["history", fixture.store, "--json"])
        #expect(result.code == 0, "\(result.error)")
        let objects = try result.output.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["token"] as? Int } == [2, 3, 4, 5, 6, 7, 8])
        let first = try #require((objects.first?["changes"] as? [[String: Any]])?.last)
        #expect((first["ids"] as? [String])?.count == 24)
        let renamed = try #require((objects[2]["changes"] as? [[String: Any]])?.first)
        #expect(renamed["changedAttributes"] as? [String] == ["title", "isRead"])
        #expect(objects.map { $0["author"] as? String } == [nil, nil, "importer", "main", "sync", "cleanup", nil])
        #expect(objects.map { $0["origin"] as? String } == ["store", "store", "store", "store", "store", "store", "outside"])
    }

    @Test func filtersByAuthorEntityAndToken() async throws {
        let fixture = try await changedStore()
        func tokens(_ arguments: [String]) async -> [String] {
            let result = await runCLI(["history", fixture.store] + arguments)
            #expect(result.code == 0, "\(arguments): \(result.error)")
            return result.output.split(separator: "\n").filter { $0.hasPrefix("token ") }.map { String($0.split(separator: " ")[1]) }
        }
        #expect(await tokens(["--author", "sync", "--author", "cleanup"]) == ["6", "7"])
        #expect(await tokens(["--excluding-author", "importer", "--excluding-author", "main"]) == ["2", "3", "6", "7", "8"])
        // By table name, any case: only transactions that changed a feed, with only their feeds.
        #expect(await tokens(["--entity", "FEEDS"]) == ["2", "5"])
        let feeds = await runCLI(["history", fixture.store, "--entity", "Feed", "--since", "3"])
        #expect(feeds.output.split(separator: "\n").dropFirst().first == "  insert  Feed  4")
        #expect(await tokens(["--since", "6"]) == ["7", "8"])
        let end = await runCLI(["history", fixture.store, "--since", "8"])
        #expect(end.output == "no transactions after token 8\n")
        let unknown = await runCLI(["history", fixture.store, "--entity", "Nope"])
        #expect(unknown.code == ExitStatus.usage)
        #expect(unknown.error.contains("no entity 'Nope'"))
    }

    /// A token older than the pruned history: status 1 and a message naming the oldest token.
    @Test func anExpiredTokenNamesTheOldest() async throws {
        let scratch = try TemporaryDirectory()
        let path = scratch.path("pruned.sqlite")
        var configuration = StoreConfiguration.default
        configuration.changeLogLimit = 5
        let store = try await Store.open(at: path, entities: [Feed.self, Article.self], configuration: configuration)
        for index in 0..<20 {
            var changes = ChangeSet()
            changes.insert(Feed(id: Int64(index), title: "Feed \(index)", url: URL(string: "https://example.com/\(index)")!,
                                category: "News"))
            try await store.submit(changes).committed()
        }
        try await store.close()
        let oldest = try StoreInspector(path: path).changeLog().floor
        #expect(oldest > 0)
        let result = await runCLI(["history", path, "--since", "1"])
        #expect(result.code == ExitStatus.failure)
        #expect(result.output.isEmpty)
        #expect(result.errorLines == ["strata: error: \(path): the history no longer reaches back to token 1: it was pruned "
                                      + "through token \(oldest). The oldest token to read from is \(oldest) (--since \(oldest)); "
                                      + "what came before is gone: read the store whole."])
        let rest = await runCLI(["history", path, "--since", String(oldest)])
        #expect(rest.code == 0)
        #expect(rest.output.hasSuffix("; read on with --since 20\n"), "\(rest.output)")
    }

    /// Other writers' rows that no store has claimed yet (the `sqlite3` shell, with no store
    /// open) are shown as one outside transaction, and reading on from its token is exact.
    @Test func showsWhatNoStoreClaimedYet() async throws {
        let fixture = try await ReaderFixture()
        try await Self.sqlite(fixture.store, "UPDATE articles SET isRead = NOT isRead WHERE id IN ('a-000001', 'a-000002')")
        let first = await runCLI(["history", fixture.store, "--since", "3"])
        let lines = first.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("token 5  ") == true && lines.first?.hasSuffix("  outside") == true, "\(lines)")
        #expect(lines.dropFirst().first == "  update  Article  a-000001  changed isRead")
        try await Self.sqlite(fixture.store, "DELETE FROM articles WHERE id = 'a-000009'")
        let next = await runCLI(["history", fixture.store, "--since", "5"])
        #expect(next.output.split(separator: "\n").dropFirst().first == "  delete  Article  a-000009")
    }

    /// `--follow` prints what a store commits after it started, then ends with status 0 on Ctrl-C.
    @Test func followSeesLaterCommitsAndEndsCleanlyOnInterrupt() async throws {
        let fixture = try await ReaderFixture()
        let follower = try StrataProcess(["history", fixture.store, "--follow"])
        #expect(await follower.readOutput(within: 30) { $0.contains("token 3  ") }, "the history so far")
        let store = try await Store.open(at: fixture.store, entities: [Feed.self, Article.self])
        try store.updateAll(Article.self, ids: ["a-000010"], set: ["isRead": true], author: "reader")
        try await store.persist()
        #expect(await follower.readOutput(within: 30) { $0.contains("author reader\n  update  Article  a-000010") },
                "the commit made after --follow started")
        try await store.close()
        follower.interrupt()
        let result = try await follower.finished()
        #expect(result.status == ExitStatus.ok, "\(result.error)")
        #expect(result.output.hasSuffix("transactions; read on with --since 4\n"), "\(result.output)")
    }

    /// Runs the `sqlite3` shell (found on PATH) on the file with `sql`: another application
    /// writing it, with no Strata store open.
    private static func sqlite(_ path: String, _ sql: String) async throws {
        let status = try await offThread {
            Result {
                let shell = Process()
                shell.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                shell.arguments = ["sqlite3", "-bail", path, sql]
                try shell.run()
                shell.waitUntilExit()
                return shell.terminationStatus
            }
        }.get()
        #expect(status == 0, "sqlite3 \(sql)")
    }
}
