import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The history: one transaction per committed change set, with its author, time and origin, and
/// per entry the entity, the IDs, the operation and an update's changed attributes.
@Suite struct HistoryTests {
    private func read(_ store: Store, since token: ChangeToken = ChangeToken(generation: 0), entities: [any Entity.Type]? = nil,
                      authors: [String]? = nil, excludingAuthors: [String] = [],
                      pageSize: Int = 100) async throws -> [HistoryTransaction] {
        var result: [HistoryTransaction] = []
        for try await transaction in store.history(since: token, entities: entities, authors: authors,
                                                   excludingAuthors: excludingAuthors, pageSize: pageSize) {
            result.append(transaction)
        }
        return result
    }

    private func described(_ change: HistoryChange) -> String {
        "\(change.operation) \(change.entity) \(change.ids.map(\.description).joined(separator: ","))"
            + (change.changedAttributes.isEmpty ? "" : " [\(change.changedAttributes.joined(separator: ","))]")
    }

    @Test func insertsUpdatesAndDeletesAreTransactionsOfTheirContexts() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let start = try await store.currentChangeToken()
        let before = Date()
        let worker = store.makeWorkerContext(name: "importer")
        try await worker.perform { worker in
            for index in 0..<3 { try worker.insert(Article.make(index)) }
            try worker.save()
        }
        try await store.persist()
        let editor = store.makeWorkerContext(name: "editor")
        var article = try #require(try await editor.fetch(Query<Article>(where: Attribute("id") == "article-1")).first)
        article.title = "Edited"
        article.isStarred = true
        try await editor.perform { [article] worker in
            try worker.update(article)
            try worker.delete(Article.self, id: "article-2")
            try worker.save(author: "review")
        }
        try await store.persist()

        let transactions = try await read(store, since: start)
        #expect(transactions.map(\.author) == ["importer", "review"])
        #expect(transactions.allSatisfy { $0.origin == .store && $0.date >= before.addingTimeInterval(-1) })
        #expect(transactions[0].changes.map(described) == ["insert Article 'article-0','article-1','article-2'"])
        #expect(transactions[1].changes.map(described) == [
            "update Article 'article-1' [title,isStarred]", "delete Article 'article-2'",
        ], "exactly the attributes the edit changed")
        #expect(transactions[0].token < transactions[1].token)
        #expect(transactions[1].token == (try await store.currentChangeToken()))
        try await store.close()
    }

    @MainActor @Test func theMainContextSavesUnderItsNameOrTheAuthorGiven() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let main = store.mainContext
        try main.insert(Feed(id: 1, name: "One"))
        try main.save()
        try main.insert(Feed(id: 2, name: "Two"))
        try main.save(author: "onboarding")
        var changes = ChangeSet()
        changes.insert(Feed(id: 3, name: "Three"))
        try store.submit(changes)
        try store.updateAll(Feed.self, ids: [1, 2], set: ["name": "Renamed"], author: "sync")
        try await store.persist()

        let transactions = try await read(store)
        #expect(transactions.map(\.author) == ["main", "onboarding", nil, "sync"])
        #expect(try await read(store, authors: ["sync", "main"]).map(\.author) == ["main", "sync"])
        #expect(try await read(store, excludingAuthors: ["sync", "main"]).map(\.author) == ["onboarding", nil])
        try await store.close()
    }

    /// The main context's bulk operations pass their `author:` to the store's: each is one
    /// transaction under it, or under the context's name when none is given, as its saves are.
    @MainActor @Test func theMainContextsBulkOperationsRecordTheAuthorGiven() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let main = store.mainContext
        let start = try await seed(store, with: (0..<6).map { Article.make($0) })
        try await main.updateAll(Article.self, ids: ["article-0", "article-1"], set: ["isRead": true], author: "sync")
        try await main.updateAll(Article.self, where: Attribute("id") == "article-2", set: ["isStarred": true],
                                 author: "reader")
        try await main.deleteAll(Article.self, ids: ["article-3"], author: "sync")
        try await main.deleteAll(Article.self, where: Attribute("id") == "article-4", author: "cleanup")
        try await main.deleteAll(Article.self, ids: ["article-5"])
        try await store.persist()

        let transactions = try await read(store, since: start)
        #expect(transactions.map(\.author) == ["sync", "reader", "sync", "cleanup", "main"])
        #expect(transactions.map { $0.changes.map(described) } == [
            ["update Article 'article-0','article-1' [isRead]"], ["update Article 'article-2' [isStarred]"],
            ["delete Article 'article-3'"], ["delete Article 'article-4'"], ["delete Article 'article-5'"],
        ])
        try await store.close()
    }

    @Test func aBulkOperationIsOneEntryListingWhatItMatched() async throws {
        let directory = try TemporaryDirectory()
        let log = StatementLog()
        let store = try await openStore(directory.path("s.sqlite"), log: log)
        let start = try await seed(store, with: (0..<6).map { Article.make($0) })

        log.clear()
        var changes = ChangeSet()
        changes.updateAll(Article.self, ids: ["article-0", "article-1", "gone"], set: ["isStarred": true, "isRead": true])
        changes.updateAll(Article.self, where: Attribute("feedID") == Int64(2), set: ["title": "Two"])
        changes.deleteAll(Article.self, ids: ["article-3", "article-4"])
        changes.deleteAll(Article.self, where: Attribute("id") == "article-5")
        try await store.submit(changes).committed()
        let transactions = try await read(store, since: start)
        #expect(transactions.count == 1)
        #expect(transactions.first?.changes.map(described) == [
            "update Article 'article-0','article-1' [isRead,isStarred]", "update Article 'article-2' [title]",
            "delete Article 'article-3','article-4'", "delete Article 'article-5'",
        ])
        // The cost stays one statement per operation: no statement per object for the history.
        #expect(log.count { $0.hasPrefix("INSERT INTO strata_changes") } == 4)
        #expect(log.count { $0.hasPrefix("INSERT INTO strata_transactions") || $0.contains("INSERT INTO strata_transactions") } == 1)
        try await store.close()
    }

    @Test func outsideWritersAreTransactionsWithoutAnAuthor() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await openStore(path)
        let start = try await seed(store, with: [Feed(id: 1, name: "One"), Feed(id: 2, name: "Two")])

        try await store.write { db in
            try db.execute("UPDATE Feed SET name = 'Uno' WHERE id = 1")
            try db.execute("UPDATE Feed SET name = name WHERE id = 2")
            try db.execute("INSERT INTO Feed (id, name) VALUES (3, 'Three')")
        }
        // A second connection: another process as far as the store can tell.
        let other = try await openStore(path)
        try await other.write { db in try db.execute("DELETE FROM Feed WHERE id = 3") }
        try await other.close()

        let transactions = try await read(store, since: start)
        #expect(transactions.map(\.origin) == [.outside, .outside])
        #expect(transactions.map(\.author) == [nil, nil])
        #expect(transactions.map { $0.changes.map(described) } == [
            ["update Feed 1 [name]", "update Feed 2", "insert Feed 3"],
            ["delete Feed 3"],
        ], "an update names exactly the columns whose values changed")
        try await store.close()
    }

    @Test func aSequenceReadsPagesOfItsSizeAndYieldsEveryTransactionInOrder() async throws {
        let directory = try TemporaryDirectory()
        let log = StatementLog()
        let store = try await openStore(directory.path("s.sqlite"), log: log)
        var (random, seed) = SeededRandom.forTest("aSequenceReadsPages")
        print("seed \(seed)")
        let count = 20 + random.next(20)
        for index in 0..<count {
            var changes = ChangeSet()
            changes.insert(Feed(id: Int64(index), name: "Feed \(index)"))
            changes.transactionAuthor = "author-\(index % 3)"
            try store.submit(changes)
        }
        try await store.persist()

        log.clear()
        let transactions = try await read(store, pageSize: 7)
        #expect(transactions.count == count)
        #expect(transactions.map { $0.changes.first?.ids } == (0..<count).map { [.integer(Int64($0))] })
        #expect(zip(transactions, transactions.dropFirst()).allSatisfy { $0.token < $1.token })
        let pages = log.statements.filter { $0.contains("FROM strata_transactions WHERE generation >") }
        #expect(pages.count == count / 7 + 1, "one read per page, and one that finds the end")
        #expect(pages.allSatisfy { $0.hasSuffix("LIMIT 7") }, "a page holds at most its size")

        let excluded = try await read(store, excludingAuthors: ["author-0"], pageSize: 4)
        #expect(excluded.count == count - (count + 2) / 3)
        #expect(excluded.allSatisfy { $0.author != "author-0" })
        try await store.close()
    }

    @Test func anEntityFilterKeepsThatEntitysEntriesAndTransactions() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var both = ChangeSet()
        both.insert(Feed(id: 1, name: "One"))
        both.insert(Article.make(1))
        try store.submit(both)
        var feeds = ChangeSet()
        feeds.insert(Feed(id: 2, name: "Two"))
        try store.submit(feeds)
        try await store.persist()

        let articles = try await read(store, entities: [Article.self], pageSize: 1)
        #expect(articles.count == 1)
        #expect(articles.first?.changes.map(described) == ["insert Article 'article-1'"])
        try await store.close()
    }

    /// `changes(since:)` reads the history's pages: the same entries, one change per ID, with what
    /// another process committed whether or not the store has claimed it yet, and a token taken
    /// inside what becomes one outside transaction reads on from the entry after it.
    @Test func changesSinceAreTheHistoryOneChangePerID() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await openStore(path)
        let start = try await seed(store, with: [Feed(id: 1, name: "One"), Feed(id: 2, name: "Two")])
        func described(_ history: ChangeHistory) -> [String] { history.changes.map { "\($0.operation) \($0.entity) \($0.key)" } }

        _ = try await ExternalTools.sqlite3(path, "INSERT INTO Feed (id, name) VALUES (3, 'shell')")
        let middle = try await store.changes(since: start)
        #expect(described(middle) == ["insert Feed 3"])
        #expect(middle.token.generation == start.generation + 1)
        _ = try await ExternalTools.sqlite3(path, "INSERT INTO Feed (id, name) VALUES (4, 'shell')")
        var changes = ChangeSet()
        changes.deleteAll(Feed.self, ids: [1, 2])
        try await store.submit(changes).committed()

        #expect(described(try await store.changes(since: middle.token)) == ["insert Feed 4", "delete Feed 1", "delete Feed 2"])
        let all = try await store.changes(since: start)
        #expect(described(all) == ["insert Feed 3", "insert Feed 4", "delete Feed 1", "delete Feed 2"])
        #expect(all.token == (try await store.currentChangeToken()))
        let history = try await read(store, since: start)
        #expect(all.changes.map(\.key) == history.flatMap(\.changes).flatMap(\.ids))
        #expect(Set(all.changes.map(\.generation)).count == 3, "one generation per entry: two inserts and the bulk delete")
        try await store.close()
    }

    @Test func aTokenOlderThanThePrunedHistoryExpiresWithTheOldestToken() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite")) { $0.changeLogLimit = 5 }
        for index in 0..<20 {
            var changes = ChangeSet()
            changes.insert(Feed(id: Int64(index), name: "Feed \(index)"))
            try await store.submit(changes).committed()
        }
        let floor = try await store.read { db in try db.rows("SELECT value FROM strata_meta WHERE key = 'log_floor'") }
            .first.flatMap { Int64.fromDatabaseValue($0.values[0]) }
        let oldest = try #require(floor)
        do {
            _ = try await read(store, since: ChangeToken(generation: oldest - 1))
            Issue.record("reading from before the pruned history succeeded")
        } catch let error as StrataError {
            #expect(error.code == .historyExpired)
            #expect(error.oldestAvailableToken == ChangeToken(generation: oldest))
        }
        let rest = try await read(store, since: ChangeToken(generation: oldest))
        #expect(rest.last?.changes.first?.ids == [DatabaseValue.integer(19)])
        #expect(rest.count == 20 - Int(oldest))
        await #expect(throws: StrataError.self) { try await store.changes(since: ChangeToken(generation: oldest - 1)) }
        try await store.close()
    }
}
