import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The change log: Strata's writer logs its own change sets, one entry per run of same-kind
/// operations; triggers keep logging every other writer row by row.
@MainActor
@Suite struct ChangeLogTests {
    private func entries(_ store: Store) async throws -> [[DatabaseValue]] {
        try await store.read { db in
            try db.rows("SELECT generation, key, op FROM strata_changes ORDER BY generation").map { $0.values }
        }
    }

    @Test func aChangeSetIsLoggedOnceAndReadBackKeyByKey() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let token = try await store.currentChangeToken()
        var changes = ChangeSet()
        for index in 0..<1_000 { changes.insert(Article.make(index)) }
        try await store.submit(changes).committed()
        let logged = try await entries(store)
        #expect(logged.count == 1, "one entry for 1,000 inserts")
        #expect(logged.first?[1].isBlob == true)

        let history = try await store.changes(since: token)
        #expect(history.changes.count == 1_000)
        #expect(history.changes.map(\.key) == (0..<1_000).map { .text("article-\($0)") }, "every key, in order")
        #expect(Set(history.changes.map(\.generation)).count == 1)
        #expect(history.changes.allSatisfy { $0.operation == .insert && $0.entity == "Article" })
        #expect(history.token.generation == logged.first?[0].integer)
    }

    /// A batch's keys read back exactly, whatever their text holds: plain keys are copied in one
    /// piece, those with quotes, backslashes or control characters escaped.
    @Test func batchKeysRoundTripThroughTheirJSON() throws {
        let keys: [DatabaseValue] = [
            .text("article-1"), .text(""), .text("say \"hi\""), .text("back\\slash"), .text("tab\tnew\nline"),
            .text("nul\u{0}byte"), .text("\u{1F600} \u{E9}"), .text("\u{7F}del"), .integer(0), .integer(.min), .integer(.max),
        ]
        let stored = DatabaseValue.blob(ChangeLog.encode(keys))
        #expect(try ChangeLog.keys(of: stored, generation: 1) == keys)
    }

    @Test func everyKindOfOperationIsLoggedAsTheTriggersWould() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var seed = ChangeSet()
        for index in 0..<5 { seed.insert(Article.make(index)) }
        try await store.submit(seed).committed()
        let token = try await store.currentChangeToken()

        var changes = ChangeSet()
        changes.upsert(Article.make(1))                  // exists: an update
        changes.upsert(Article.make(7))                  // new: an insert
        changes.update(Article.make(2))
        changes.delete(Article.self, id: "article-3")
        changes.delete(Article.self, id: "never-there")  // changes nothing: logs nothing
        changes.updateAll(Article.self, ids: ["article-0", "article-4", "gone"], set: ["isRead": true])
        changes.deleteAll(Article.self, where: Attribute("id") == "article-4")
        changes.insert(Article.make(8))
        changes.delete(Article.self, id: "article-8")    // inserted and deleted in one change set
        try await store.submit(changes).committed()

        let history = try await store.changes(since: token)
        let described = history.changes.map { "\($0.operation) \($0.key)" }
        #expect(described == [
            "update 'article-1'", "insert 'article-7'", "update 'article-2'", "delete 'article-3'",
            "update 'article-0'", "update 'article-4'", "delete 'article-4'", "insert 'article-8'", "delete 'article-8'",
        ])
    }

    @Test func writersOutsideStrataAreStillLoggedRowByRow() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await openStore(path)
        var seed = ChangeSet()
        for index in 0..<3 { seed.insert(Article.make(index)) }
        try await store.submit(seed).committed()
        let token = try await store.currentChangeToken()

        // The sqlite3 shell, as another process.
        _ = try await ExternalTools.sqlite3(path, "UPDATE articles SET title = 'shell' WHERE uniqueID IN ('article-0', 'article-1');")
        // The store's own raw SQL.
        try await store.write { db in try db.execute("DELETE FROM articles WHERE uniqueID = 'article-2'") }

        let history = try await store.changes(since: token)
        #expect(history.changes.map { "\($0.operation) \($0.key)" }.sorted()
                == ["delete 'article-2'", "update 'article-0'", "update 'article-1'"])
        #expect(Set(history.changes.map(\.generation)).count == 3, "one generation per row")
    }

    @Test func aFailedChangeSetLeavesNoEntry() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var seed = ChangeSet()
        seed.insert(Article.make(1))
        try await store.submit(seed).committed()
        let before = try await entries(store)
        var failing = ChangeSet()
        failing.insert(Article.make(2))
        failing.insert(Article.make(1))                   // duplicate key: the change set fails
        await #expect(throws: StrataError.self) { try await store.submit(failing).committed() }
        #expect(try await entries(store) == before)
        var next = ChangeSet()
        next.insert(Article.make(3))
        try await store.submit(next).committed()
        #expect(try await entries(store).count == before.count + 1)
    }

    @Test func fullTextSearchStaysInSyncWithTheWriterAndRawSQL() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var changes = ChangeSet()
        var article = Article.make(1)
        article.title = "quantum gardening"
        changes.insert(article)
        try await store.submit(changes).committed()
        #expect(try await store.ids(Query<Article>(where: .matches("gardening"))) == ["article-1"])
        try await store.write { db in try db.execute("UPDATE articles SET title = 'orbital baking' WHERE uniqueID = 'article-1'") }
        #expect(try await store.ids(Query<Article>(where: .matches("gardening"))).isEmpty)
        #expect(try await store.ids(Query<Article>(where: .matches("baking"))) == ["article-1"])
        try await store.updateAll(Article.self, ids: ["article-1"], set: ["title": "tidal knitting"]).committed()
        #expect(try await store.ids(Query<Article>(where: .matches("knitting"))) == ["article-1"])
        #expect(try await store.ids(Query<Article>(where: .matches("baking"))).isEmpty)
    }

    @Test func olderTriggersAreReplacedAtOpen() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        do {
            let store = try await openStore(path)
            // The triggers of earlier versions logged every row, Strata's own too.
            try await store.write { db in
                try db.execute("DROP TRIGGER strata_log_articles_insert")
                try db.execute("CREATE TRIGGER strata_log_articles_insert AFTER INSERT ON articles BEGIN "
                               + "INSERT INTO strata_changes (entity, key, op) VALUES (1, new.uniqueID, 1); END")
            }
            try await store.close()
        }
        let store = try await openStore(path)
        let sql = try await store.read { db in
            try db.value("SELECT sql FROM sqlite_master WHERE name = 'strata_log_articles_insert'")
        }
        #expect(String.fromDatabaseValue(sql ?? .null)?.contains("INSERT INTO strata_changes") == true)
        #expect(String.fromDatabaseValue(sql ?? .null)?.contains("WHEN") == false, "no marker check left")
        var changes = ChangeSet()
        for index in 0..<10 { changes.insert(Article.make(index)) }
        let token = try await store.currentChangeToken()
        try await store.submit(changes).committed()
        #expect(try await store.changes(since: token).changes.count == 10)
        #expect(try await entries(store).count == 1)
    }
}

extension DatabaseValue {
    var isBlob: Bool { if case .blob = self { true } else { false } }
    var integer: Int64? { Int64.fromDatabaseValue(self) }
}
