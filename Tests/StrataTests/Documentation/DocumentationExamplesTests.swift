import Foundation
import Strata
import StrataTestSupport
import Testing

/// The code of the articles in `Sources/Strata/Strata.docc`, compiled and run, so that an API
/// change that breaks an article breaks the build. Keep each test in step with its article.
@Suite struct DocumentationExamplesTests {
    // GettingStarted.md
    struct Feed: Entity {
        var id: Int64
        var name: String

        static let isResident = true
    }

    struct Article: Entity {
        var id: String
        var feedID: Int64
        var title: String
        var published: Date
        var isRead = false

        static let indexes = [EntityIndex(["feedID", "isRead"])]
        static let fullTextAttributes = ["title"]
        // What rows written before `isRead` existed hold (TestingWithStrata's migration example).
        static let attributeDefaults: [String: DatabaseValue] = ["isRead": .integer(0)]
    }

    @MainActor
    func unreadArticles(in store: Store) async throws -> [Article] {
        let main = store.mainContext              // keep it, as a UI keeps its view context
        try await main.loadResidentEntities()     // every Feed, since Feed is resident
        let unread = Query<Article>(where: Attribute("isRead") == false,
                                    sortedBy: [Attribute("published").descending])
        _ = try await main.fetch(unread)          // Article is not resident: bring the matches into memory
        return try main.objects(matching: unread) // from now on: memory only, no SQL
    }

    @MainActor
    @Test func gettingStarted() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.url.path + "/reader.sqlite", entities: [Feed.self, Article.self])

        let worker = store.makeWorkerContext(name: "sync")
        let downloaded = [Article(id: "a1", feedID: 1, title: "Strata 1.0", published: .now)]
        try await worker.perform { worker in
            for article in downloaded { try worker.insert(article) }
            try worker.save()
        }
        try await store.persist()
        #expect(try await unreadArticles(in: store).map(\.id) == ["a1"])

        do {
            try await store.persist()
        } catch let error as StrataError where error.isTransient {
            print("will retry: \(error.localizedDescription)")
        }
        var configuration = StoreConfiguration()
        configuration.logLevel = .debug
        #expect(configuration.logLevel == .debug)
        try await store.close()
    }

    // ContextsAndThreading.md
    @Test func contextsAndThreading() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.path("reader.sqlite"), entities: [Feed.self, Article.self])
        let worker = store.makeWorkerContext(name: "sync")
        let submission = try await worker.perform { worker in
            try worker.insert(Article(id: "a2", feedID: 1, title: "Contexts", published: .now))
            return try worker.save()              // returns at once
        }
        try await submission?.committed()

        let editor = store.makeWorkerContext(name: "editor", mergePolicy: .mergeProperties)
        await editor.setMergePolicy(.reportConflict)
        #expect(await editor.mergePolicy == .reportConflict)

        let main = await store.mainContext
        _ = try await main.fetch(Query<Article>())
        let (page, unread) = try await listScreen(main, feed: 1)
        #expect(page.ids == ["a2"] && page.first?.title == "Contexts" && unread == 1)
        try await store.close()
    }

    @MainActor
    func listScreen(_ main: MainContext, feed: Int64) throws -> (QueryResults<Article>, Int) {
        let page = try main.results(matching: Query<Article>(
            where: Attribute("feedID") == feed && Attribute("isRead") == false,
            sortedBy: [Attribute("published").descending], limit: 50))
        let unread = try main.count(matching: Query<Article>(where: Attribute("feedID") == feed && Attribute("isRead") == false))
        return (page, unread)
    }

    // WarmStartWithSnapshots.md
    @MainActor
    func suspend(_ main: MainContext, snapshot: String) async throws {
        let summary = try await main.writeSnapshot(to: snapshot)
        print("\(summary.header.objectCount) objects, \(summary.fileSize) bytes")
    }

    @MainActor
    func launch(database: String, snapshot: String) async throws -> MainContext {
        let warm = try await Store.openWarm(at: database, snapshot: snapshot,
                                            entities: [Feed.self, Article.self])
        switch warm.outcome {
        case .used, .caughtUp: break                         // data shown from the archive
        case .coldStart(let error): print("cold start: \(error.message)")
        }
        return warm.mainContext
    }

    // WarmStartWithSnapshots.md, "Show the first screen first" (`Article` there).
    struct ListedArticle: Entity, Equatable {
        var id: String
        var feedID: Int64
        var title: String
        var published: Date
        var isRead = false

        static let snapshotOrder = [Attribute("published").descending]
    }

    @MainActor
    final class ArticleList {
        var shown: [ListedArticle] = []
        func show(_ articles: QueryResults<ListedArticle>) { shown = Array(articles) }
    }

    @MainActor
    func launch(database: String, snapshot: String, list: ArticleList) async throws -> MainContext {
        let newestUnread = Query<ListedArticle>(where: Attribute("isRead") == false,
                                                sortedBy: [Attribute("published").descending], limit: 50)
        let warm = try await Store.openWarm(at: database, snapshot: snapshot,
                                            entities: [Feed.self, ListedArticle.self],
                                            firstScreen: newestUnread) { articles in list.show(articles) }
        #expect(warm.showedFirstScreenEarly)
        return warm.mainContext   // every object; observe the list from here on
    }

    @MainActor
    @Test func firstScreenFirst() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("reader.sqlite"), snapshot = directory.path("reader.snapshot")
        do {
            let store = try await Store.open(at: database, entities: [Feed.self, ListedArticle.self])
            let main = store.mainContext
            for index in 0..<120 {
                try main.insert(ListedArticle(id: "a\(index)", feedID: 1, title: "Article \(index)",
                                              published: Date(timeIntervalSinceReferenceDate: Double(index)),
                                              isRead: index % 3 == 0))
            }
            try main.save()
            try await main.writeSnapshot(to: snapshot)
            try await store.close()
        }
        let list = ArticleList()
        let main = try await launch(database: database, snapshot: snapshot, list: list)
        #expect(list.shown.count == 50)
        #expect(list.shown.first?.id == "a119")
        #expect(list.shown == (try main.objects(matching: Query<ListedArticle>(
            where: Attribute("isRead") == false, sortedBy: [Attribute("published").descending], limit: 50))))
        try await main.store.close()
    }

    struct CodecFeed: Entity {
        var id: Int64
        var name: String
    }

    @MainActor
    @Test func warmStartWithSnapshots() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("reader.sqlite"), snapshot = directory.path("reader.snapshot")
        do {
            let store = try await Store.open(at: database, entities: [Feed.self, Article.self])
            let main = store.mainContext
            try main.insert(Feed(id: 1, name: "Swift"))
            try main.save()
            try await suspend(main, snapshot: snapshot)
            let automatic = main.writeSnapshotsAutomatically(to: snapshot, afterChanges: 1_000,
                                                             interval: .seconds(60))
            automatic.cancel()
            try await store.close()
        }
        let main = try await launch(database: database, snapshot: snapshot)
        #expect(main.object(Feed.self, id: 1)?.name == "Swift")
        let header = try Snapshot.readHeader(at: snapshot)
        #expect(header.objectCount == 1)
        let row = try #require(try await main.store.read { db in try db.rows("SELECT id, name FROM Feed") }.first)
        #expect(row["name"] == .text("Swift"))

        let codecs = try await Store.open(at: directory.path("codec.sqlite"), entities: [CodecFeed.self])
        var changes = ChangeSet()
        changes.insert(CodecFeed(id: 1, name: "Swift"))
        try await codecs.submit(changes).committed()
        #expect(try await codecs.fetch(CodecFeed.self, id: 1)?.name == "Swift")
        try await main.store.close()
    }

    // BulkUpdates.md
    @MainActor
    func markFeedRead(_ main: MainContext, feed: Int64) async throws {
        try await main.updateAll(Article.self, where: Attribute("feedID") == feed, set: ["isRead": true])
    }

    @MainActor
    @Test func bulkUpdates() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.path("reader.sqlite"), entities: [Feed.self, Article.self])
        let cutoff = Date(timeIntervalSinceReferenceDate: 100)
        var seed = ChangeSet()
        for index in 0..<10 {
            seed.insert(Article(id: "a\(index)", feedID: Int64(index % 2 == 0 ? 7 : 1), title: "Title \(index)",
                                published: Date(timeIntervalSinceReferenceDate: Double(index) * 30)))
        }
        try store.submit(seed)
        let readElsewhere = ["a1", "a3"], deletedOnServer = ["a9", "never-stored"]

        try store.updateAll(Article.self, ids: readElsewhere, set: ["isRead": true])
        try store.updateAll(Article.self, where: Attribute("feedID") == 7, set: ["isRead": true])
        try store.deleteAll(Article.self, where: Attribute("published") < cutoff)
        try store.deleteAll(Article.self, ids: deletedOnServer)    // IDs not in the store are skipped

        try await markFeedRead(store.mainContext, feed: 1)
        var changes = ChangeSet()
        changes.upsert(Feed(id: 7, name: "Swift"))
        changes.updateAll(Article.self, where: Attribute("feedID") == 7, set: ["isRead": false])
        try store.submit(changes)
        try await store.persist()

        #expect(try await store.ids(Query<Article>(where: Attribute("isRead") == true)) == ["a5", "a7"])
        #expect(try await store.ids(Query<Article>(where: Attribute("isRead") == false)) == ["a4", "a6", "a8"])
        for (values, code) in [(["nope": true], StrataError.Code.unknownAttribute), (["isRead": "yes"], .invalidValue),
                               (["id": "b1"], .invalidValue)] as [([String: any DatabaseValueConvertible], StrataError.Code)] {
            let error = #expect(throws: StrataError.self) { try store.updateAll(Article.self, ids: ["a4"], set: values) }
            #expect(error?.code == code)
        }
        try await store.close()
    }

    // Migrations.md
    struct StarredArticle: Entity {
        static let entityName = "Article"
        var id: String
        var title: String
        var isStarred: Bool                  // new in version 2: existing rows get `true`

        static let attributeDefaults: [String: DatabaseValue] = ["isStarred": .integer(1)]
        static let indexes = [EntityIndex(["isStarred"])]       // new in version 2: created at open
    }

    struct OldArticle: Entity {
        static let entityName = "Article"
        var id: String
        var title: String
        var starred: Bool
        var summary: String?
    }

    @Test func migrations() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("reader.sqlite")
        do {
            let old = try await Store.open(at: path, entities: [OldArticle.self])
            var changes = ChangeSet()
            changes.insert(OldArticle(id: "a1", title: "Old", starred: false, summary: "gone soon"))
            try await old.submit(changes).committed()
            try await old.close()
        }
        let migrations = [
            Migration("rename starred") { db in
                try db.execute("ALTER TABLE Article RENAME COLUMN starred TO isStarred")
            },
            Migration("drop summaries") { db in
                if try db.columnExists("summary", in: "Article") {
                    try db.execute("ALTER TABLE Article DROP COLUMN summary")
                }
            },
        ]
        let store = try await Store.open(at: path, entities: [StarredArticle.self], migrations: migrations)
        #expect(store.appliedMigrations == ["rename starred", "drop summaries", "create index Article_isStarred"])
        #expect(try await store.fetch(StarredArticle.self, id: "a1")?.isStarred == false)
    }

    // FileFormat.md
    struct Reading: Entity {
        var id: UUID
        var takenAt: Date
        var isValid: Bool
        var amount: Decimal
        var source: URL
        var tags: [String]
    }

    @Test func fileFormat() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.path("readings.sqlite"), entities: [Reading.self])
        let id = UUID()
        var changes = ChangeSet()
        changes.insert(Reading(id: id, takenAt: Date(timeIntervalSince1970: 978_307_200 + 90), isValid: true,
                               amount: Decimal(string: "12.50")!, source: URL(string: "https://example.com/a")!,
                               tags: ["b", "a"]))
        try await store.submit(changes).committed()
        let (row, types, meta, tables, triggers) = try await store.read { db in
            (try db.rows("SELECT * FROM Reading")[0],
             try db.columns(in: "Reading").map(\.type),
             try db.rows("SELECT key FROM strata_meta ORDER BY key").compactMap { $0["key"] },
             try db.rows("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0["name"] },
             try db.rows("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name").compactMap { $0["name"] })
        }
        #expect(row.columns == ["id", "takenAt", "isValid", "amount", "source", "tags"])
        #expect(types == ["TEXT", "REAL", "INTEGER", "TEXT", "TEXT", "TEXT"])
        #expect(row["id"] == .text(id.uuidString) && id.uuidString == id.uuidString.uppercased())
        #expect(row["takenAt"] == .real(90))                     // seconds since 2001
        #expect(row["isValid"] == .integer(1))
        #expect(row["amount"] == .text("12.5"))
        #expect(row["source"] == .text("https://example.com/a"))
        #expect(row["tags"] == .text(#"["b","a"]"#))
        #expect(meta == [.text("created_at"), .text("format"), .text("schema_version"), .text("store_id")])
        #expect(Set(["strata_meta", "strata_migrations", "strata_entities", "strata_changes", "strata_transactions",
                     "strata_consumers", "strata_values"].map { DatabaseValue.text($0) })
            .isSubset(of: tables))
        #expect(triggers == ["strata_log_Reading_delete", "strata_log_Reading_insert", "strata_log_Reading_update"].map { .text($0) })
        let (first, second) = (UUID(), UUID())
        var batch = ChangeSet()   // two inserts in a row: one entry, its key the JSON array of both
        for other in [first, second] {
            batch.insert(Reading(id: other, takenAt: .now, isValid: false, amount: 1, source: URL(string: "a:b")!, tags: []))
        }
        try await store.submit(batch).committed()
        let log = try await store.read { db in
            try db.rows("""
                SELECT c.generation, e.name, coalesce(k.value, c.key) AS key, c.op
                FROM strata_changes AS c
                JOIN strata_entities AS e ON e.rowid = c.entity
                LEFT JOIN json_each(CASE WHEN typeof(c.key) = 'blob' THEN CAST(c.key AS TEXT) END) AS k
                WHERE c.generation > ?
                ORDER BY c.generation, k.key;
                """, [.integer(0)])
        }
        #expect(log.map(\.values) == [
            [.integer(1), .text("Reading"), .text(id.uuidString), .integer(1)],
            [.integer(2), .text("Reading"), .text(first.uuidString), .integer(1)],
            [.integer(2), .text("Reading"), .text(second.uuidString), .integer(1)],
        ])
    }

    // TestingWithStrata.md
    final class StatementLog: @unchecked Sendable {
        // Safe: `lines` is only touched while `lock` is held.
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ sql: String) { lock.withLock { lines.append(sql) } }
        var count: Int { lock.withLock { lines.count } }
    }

    struct ArticleVersion1: Entity {
        static let entityName = "Article"
        var id: String
        var feedID: Int64
        var title: String
        var published: Date
    }

    @Test func savedArticlesAreFound() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.path("reader.sqlite"), entities: [Feed.self, Article.self])
        var changes = ChangeSet()
        changes.insert(Article(id: "a1", feedID: 1, title: "Hello", published: .now))
        try await store.submit(changes).committed()
        #expect(try await store.fetch(Article.self, id: "a1")?.title == "Hello")
        try await store.close()          // releases the file before the directory goes
    }

    @MainActor
    @Test func aWorkerSaveReachesTheMainContext() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.path("reader.sqlite"), entities: [Feed.self, Article.self])
        let main = store.mainContext
        var merges = main.changes().makeAsyncIterator()

        let worker = store.makeWorkerContext(name: "sync")
        try await worker.perform { worker in
            try worker.insert(Article(id: "a1", feedID: 1, title: "Hello", published: .now))
            try worker.save()
        }

        let change = await merges.next()
        #expect(change?.origin == .context("sync"))
        #expect(change?.inserted(Article.self) == ["a1"])
        #expect(main.object(Article.self, id: "a1")?.title == "Hello")
        try await store.close()
    }

    @MainActor
    @Test func feedsAreReadFromMemory() async throws {
        let directory = try TemporaryDirectory()
        let log = StatementLog()
        var configuration = StoreConfiguration()
        configuration.statementObserver = { sql in log.append(sql) }
        let store = try await Store.open(at: directory.path("reader.sqlite"), entities: [Feed.self, Article.self],
                                         configuration: configuration)
        let main = store.mainContext
        try await main.loadResidentEntities()

        let before = log.count
        _ = main.objects(Feed.self)
        #expect(log.count == before)
        #expect(before > 0)
        try await store.close()
    }

    @Test func updatingAMissingArticleFails() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.path("reader.sqlite"), entities: [Feed.self, Article.self])
        var changes = ChangeSet()
        changes.update(Article(id: "ghost", feedID: 1, title: "Nobody", published: .now))
        let submission = try store.submit(changes)
        let error = await #expect(throws: StrataError.self) { try await submission.committed() }
        #expect(error?.code == .objectNotFound)
        #expect(error?.objectID == "ghost")
    }

    @Test func version2AddsIsRead() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("reader.sqlite")
        let old = try await Store.open(at: path, entities: [ArticleVersion1.self])
        var changes = ChangeSet()
        changes.insert(ArticleVersion1(id: "a1", feedID: 1, title: "Old", published: .now))
        try await old.submit(changes).committed()
        try await old.close()

        let store = try await Store.open(at: path, entities: [Feed.self, Article.self])
        #expect(store.appliedMigrations.contains("add column Article.isRead"))
        #expect(try await store.fetch(Article.self, id: "a1")?.isRead == false)
    }

    @MainActor
    @Test func launchUsesTheSnapshot() async throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("reader.sqlite"), snapshot = directory.path("reader.snapshot")
        let store = try await Store.open(at: database, entities: [Feed.self, Article.self])
        let main = store.mainContext
        try main.insert(Feed(id: 1, name: "Swift"))
        try main.save()
        try await main.writeSnapshot(to: snapshot)
        try await store.close()

        let warm = try await Store.openWarm(at: database, snapshot: snapshot, entities: [Feed.self, Article.self])
        #expect(warm.outcome == .used)
        #expect(warm.mainContext.object(Feed.self, id: 1)?.name == "Swift")
        try await warm.store.close()
    }

    // FullTextSearch.md
    struct Note: Entity, Equatable {
        var id: Int64
        var folderID: Int64
        var title: String
        var body: String?

        static let tableName = "notes"
        static let fullTextAttributes = ["title", "body"]
    }

    @MainActor
    @Test func fullTextSearch() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.path("notes.sqlite"), entities: [Note.self])
        let main = store.mainContext
        let worker = store.makeWorkerContext()
        let submission = try await worker.perform { worker in
            try worker.insert(Note(id: 1, folderID: 3, title: "Meeting notes", body: "Plan the release"))
            try worker.insert(Note(id: 2, folderID: 3, title: "Meeting", body: "Nothing to note"))
            try worker.insert(Note(id: 3, folderID: 4, title: "Meeting notes", body: nil))
            try worker.insert(Note(id: 4, folderID: 3, title: "Shopping", body: "meeting notebook"))
            return try worker.save()
        }
        await submission?.mergedIntoMainContext()

        let query = Query<Note>(where: .matches("meeting not*") && Attribute("folderID") == 3,
                                sortedBy: [Attribute("title").ascending], limit: 50)
        let ids = try main.ids(matching: query)          // main context: memory only
        let notes = try await worker.fetch(query)        // worker or store: FTS5
        #expect(ids == [2, 1, 4])   // "Meeting", "Meeting notes", "Shopping"
        #expect(notes.map(\.id) == ids)

        let ranked: [Int64] = try await store.read { db in
            try db.rows("""
                SELECT n.id FROM notes_fts JOIN notes n ON n.rowid = notes_fts.rowid
                WHERE notes_fts MATCH ? ORDER BY bm25(notes_fts) LIMIT 20
                """, [.text("meeting")]).compactMap { $0["id"].flatMap(Int64.fromDatabaseValue) }
        }
        let ranking = try await main.materialize(Note.self, ids: ranked)
        #expect(Set(ranked) == [1, 2, 3, 4])
        #expect(ranking.map(\.id) == ranked)
        try await store.close()
    }
}

extension DocumentationExamplesTests.CodecFeed {   // WarmStartWithSnapshots.md, as `Feed`
    init(row: inout RowReader) throws {
        id = try row.read()
        name = try row.read()
    }

    func encode(row: inout RowWriter) throws {
        try row.write(id)
        try row.write(name)
    }
}
