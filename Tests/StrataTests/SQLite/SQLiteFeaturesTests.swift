import Foundation
import Strata
import StrataTestSupport
import Testing

private struct SQLiteFeaturesError: Error, CustomStringConvertible {
    var description: String { "the closure gave up on purpose" }
}

// MARK: Helpers

private func feedIDs(_ store: Store) async throws -> [Int64] {
    try await store.fetch(Query<Feed>()).map(\.id)
}

private func submitted(_ store: Store, _ build: (inout ChangeSet) -> Void) async throws {
    var changes = ChangeSet()
    build(&changes)
    try await store.submit(changes).committed()
}

private func fileSize(_ path: String) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? -1
}

/// An integer pragma's value.
private func pragma(_ store: Store, _ name: String) async throws -> Int64 {
    try await store.read { db in
        guard case .integer(let value)? = try db.value("PRAGMA \(name)") else { return -1 }
        return value
    }
}

/// Articles with long summaries, so that deleting them frees many pages.
private func bulkyArticles(_ count: Int) -> [Article] {
    (0..<count).map { index in
        var article = Article.make(index)
        article.summary = String(repeating: "filler text \(index) ", count: 40)
        return article
    }
}

private func ids(_ articles: [Article]) -> [String] { articles.map(\.id) }

// MARK: Tests

@Suite struct SQLiteFeaturesTests {
    // MARK: Savepoints

    @Test func savepointInsideWriteUndoesOnlyItsOwnChanges() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("savepoints.sqlite"))
        let (kept, constraintCode) = try await store.write { db -> (Int, StrataError.Code?) in
            try db.execute("INSERT INTO Feed (id, name) VALUES (1, 'outer')")
            do {
                try db.inSavepoint {
                    try db.execute("INSERT INTO Feed (id, name) VALUES (2, 'inner')")
                    try db.execute("UPDATE Feed SET name = 'changed by inner' WHERE id = 1")
                    throw SQLiteFeaturesError()
                }
            } catch is SQLiteFeaturesError {}
            // A savepoint that returns is kept.
            let kept: Int = try db.inSavepoint {
                try db.execute("INSERT INTO Feed (id, name) VALUES (3, 'kept')")
                return db.changes
            }
            // Nested savepoints: the innermost is undone, the one around it kept.
            try db.inSavepoint {
                try db.execute("INSERT INTO Feed (id, name) VALUES (4, 'level 1')")
                do {
                    try db.inSavepoint {
                        try db.execute("INSERT INTO Feed (id, name) VALUES (5, 'level 2')")
                        throw SQLiteFeaturesError()
                    }
                } catch is SQLiteFeaturesError {}
                try db.execute("INSERT INTO Feed (id, name) VALUES (6, 'level 1 again')")
            }
            // A failing statement inside a savepoint undoes the statements before it.
            var code: StrataError.Code?
            do {
                try db.inSavepoint {
                    try db.execute("INSERT INTO Feed (id, name) VALUES (7, 'before the failure')")
                    try db.execute("INSERT INTO Feed (id, name) VALUES (1, 'duplicate')")
                }
            } catch let error as StrataError {
                code = error.code
            }
            try db.execute("INSERT INTO Feed (id, name) VALUES (8, 'outer again')")
            return (kept, code)
        }
        #expect(kept == 1)
        #expect(constraintCode == .constraint)
        #expect(try await feedIDs(store) == [1, 3, 4, 6, 8])
        #expect(try await store.fetch(Feed.self, id: 1)?.name == "outer")
    }

    @Test func writeThatThrowsRollsEverythingBack() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("rollback.sqlite"))
        try await submitted(store) { $0.insert(Feed(id: 1, name: "existing")) }

        await #expect(throws: SQLiteFeaturesError.self) {
            try await store.write { db in
                try db.execute("INSERT INTO Feed (id, name) VALUES (2, 'new')")
                try db.execute("UPDATE Feed SET name = 'renamed' WHERE id = 1")
                try db.inSavepoint { try db.execute("INSERT INTO Feed (id, name) VALUES (3, 'released savepoint')") }
                throw SQLiteFeaturesError()
            }
        }
        #expect(try await feedIDs(store) == [1])
        #expect(try await store.fetch(Feed.self, id: 1)?.name == "existing")

        // A failing statement rolls back too, and the store is not left inside a transaction.
        let error = await #expect(throws: StrataError.self) {
            try await store.write { db in
                try db.execute("INSERT INTO Feed (id, name) VALUES (4, 'new')")
                try db.execute("INSERT INTO Feed (id, name) VALUES (1, 'duplicate')")
            }
        }
        #expect(error?.code == .constraint)
        #expect(try await feedIDs(store) == [1])
        try await store.write { db in try db.execute("INSERT INTO Feed (id, name) VALUES (5, 'after')") }
        try await submitted(store) { $0.insert(Feed(id: 6, name: "change set")) }
        #expect(try await feedIDs(store) == [1, 5, 6])
    }

    // MARK: Custom SQL functions

    @Test func customFunctionsFromConfigurationAndRegister() async throws {
        let directory = try TemporaryDirectory()
        let reverse = SQLFunction("strata_reverse", argumentCount: 1) { arguments in
            guard case .text(let text) = arguments[0] else { return .null }
            return .text(String(text.reversed()))
        }
        let echo = SQLFunction("strata_echo", argumentCount: 1) { $0[0] }
        let count = SQLFunction("strata_count", argumentCount: -1) { .integer(Int64($0.count)) }
        let store = try await openStore(directory.path("functions.sqlite")) { $0.functions = [reverse, echo, count] }

        #expect(try await store.read { db in try db.value("SELECT strata_reverse('abc')") } == .text("cba"))
        #expect(try await store.read { db in try db.value("SELECT strata_reverse(?)", [.text("héllo 👋")]) }
                == .text("👋 olléh"))
        #expect(try await store.read { db in try db.value("SELECT strata_count()") } == .integer(0))
        #expect(try await store.read { db in try db.value("SELECT strata_count(1, 'a', NULL, x'00')") } == .integer(4))

        // Every kind of value goes into a function and comes back out unchanged.
        let values: [DatabaseValue] = [
            .null, .integer(.min), .integer(.max), .real(-1.5), .real(.greatestFiniteMagnitude), .text(""),
            .text("ünïcødé 👍 'quoted'"), .text("embedded \u{0} NUL"), .blob(Data()), .blob(Data([0, 1, 2, 255])),
        ]
        let echoed = try await store.read { db in try values.map { try db.value("SELECT strata_echo(?)", [$0]) } }
        #expect(echoed == values.map { Optional($0) })

        // Registered after opening, and used from a write (a bulk update in SQL).
        let domain = SQLFunction("strata_domain", argumentCount: 1) { arguments in
            guard case .text(let url) = arguments[0], let host = URL(string: url)?.host else { return .null }
            return .text(host)
        }
        try await store.register(domain)
        try await submitted(store) { changes in
            changes.insert(Article.make(1))
            var other = Article.make(2)
            other.url = URL(string: "https://swift.org/blog")!
            changes.insert(other)
        }
        try await store.write { db in try db.execute("UPDATE articles SET title = strata_domain(url)") }
        #expect(try await store.fetch(Query<Article>()).map(\.title) == ["example.com", "swift.org"])
        let hosts = try await store.read { db in
            try db.rows("SELECT strata_domain(url) AS host FROM articles WHERE strata_domain(url) LIKE ? ORDER BY host",
                        [.text("swift%")])
        }
        #expect(hosts.map { $0["host"] } == [.text("swift.org")])
        // The same articles, found through the entity API on the column the function wrote.
        #expect(try await store.ids(Query<Article>(where: Attribute("title") == "swift.org")) == ["article-2"])
    }

    @Test func throwingFunctionFailsTheStatementWithATypedError() async throws {
        let directory = try TemporaryDirectory()
        let failing = SQLFunction("strata_fail", argumentCount: 1) { arguments in
            if arguments[0] == .integer(3) { throw SQLiteFeaturesError() }
            return arguments[0]
        }
        let store = try await openStore(directory.path("failing-function.sqlite")) { $0.functions = [failing] }
        #expect(try await store.read { db in try db.value("SELECT strata_fail(1)") } == .integer(1))

        let sql = "SELECT strata_fail(?)"
        let readError = await #expect(throws: StrataError.self) {
            _ = try await store.read { db in try db.value(sql, [.integer(3)]) }
        }
        #expect(readError?.code == .sqlite)
        #expect(readError?.message.contains("the closure gave up on purpose") == true, "\(String(describing: readError))")
        #expect(readError?.sql == sql)
        #expect(readError?.sqliteCode == 1)  // SQLITE_ERROR

        // In a write, the statement fails and the transaction is rolled back.
        try await submitted(store) { changes in (1...5).forEach { changes.insert(Feed(id: Int64($0), name: "feed \($0)")) } }
        let writeError = await #expect(throws: StrataError.self) {
            try await store.write { db in try db.execute("UPDATE Feed SET name = 'x' || strata_fail(id)") }
        }
        #expect(writeError?.code == .sqlite)
        #expect(writeError?.sql == "UPDATE Feed SET name = 'x' || strata_fail(id)")
        #expect(try await store.fetch(Query<Feed>()).map(\.name) == (1...5).map { "feed \($0)" })

        // Calling a function with the wrong number of arguments is refused when preparing.
        let arity = await #expect(throws: StrataError.self) {
            _ = try await store.read { db in try db.value("SELECT strata_fail(1, 2)") }
        }
        #expect(arity?.code == .sqlite)
        #expect(arity?.sql == "SELECT strata_fail(1, 2)")
    }

    // MARK: Full-text search

    @Test func fullTextSearchMatchesWordsPrefixesAndCaseAndStaysInSync() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("fts.sqlite"))
        func article(_ index: Int, _ title: String, _ summary: String?) -> Article {
            var article = Article.make(index)
            article.title = title
            article.summary = summary
            return article
        }
        try await submitted(store) { changes in
            changes.insert(article(1, "Swift Concurrency in Practice", "Actors and tasks"))
            changes.insert(article(2, "SQLite full-text search", "FTS5 tokenizers explained"))
            changes.insert(article(3, "Café culture", nil))
            changes.insert(article(4, "Concurrent programming", "Threads, locks; and queues"))
        }
        func search(_ text: String) async throws -> [String] {
            try await store.ids(Query<Article>(where: .matches(text)))
        }
        #expect(try await search("swift") == ["article-1"])
        #expect(try await search("SWIFT") == ["article-1"])
        #expect(try await search("sWiFt PRACTICE") == ["article-1"])
        #expect(try await search("concurr*") == ["article-1", "article-4"])
        #expect(try await search("concurrency") == ["article-1"])  // no prefix: "concurrent" does not match
        #expect(try await search("concur") == [])
        #expect(try await search("actors tasks") == ["article-1"])  // words from the title and the summary
        #expect(try await search("swift threads") == [])  // every word must occur
        #expect(try await search("cafe") == ["article-3"])  // diacritics are ignored
        #expect(try await search("CAFÉ") == ["article-3"])
        #expect(try await search("full-text") == ["article-2"])
        // FTS5 query syntax is not interpreted: quotes and parentheses separate words, OR is a word.
        #expect(try await search("\"FTS5\" (tokenizers") == ["article-2"])
        #expect(try await search("fts5 OR swift") == [])
        #expect(try await store.count(Query<Article>(where: .matches("concurr*") && Attribute("feedID") == 4)) == 1)

        // Updates and deletes, by object and in bulk, keep the index in sync.
        try await submitted(store) { $0.update(article(1, "Rust ownership", "Actors and tasks")) }
        #expect(try await search("swift") == [])
        #expect(try await search("rust") == ["article-1"])
        #expect(try await search("actors") == ["article-1"])
        try await store.updateAll(Article.self, ids: ["article-4"], set: ["title": "Go channels", "summary": String?.none])
            .committed()
        #expect(try await search("concurr*") == [])
        #expect(try await search("channels") == ["article-4"])
        #expect(try await search("threads") == [])
        try await submitted(store) { $0.delete(Article.self, id: "article-2") }
        #expect(try await search("sqlite") == [])
        try await store.deleteAll(Article.self, where: .matches("cafe")).committed()
        #expect(try await search("culture") == [])
        try await submitted(store) { $0.upsert(article(5, "Swift again", nil)) }
        #expect(try await search("swift") == ["article-5"])

        // FTS5's own check: the index matches the content table exactly.
        try await store.write { db in try db.execute("INSERT INTO articles_fts(articles_fts) VALUES ('integrity-check')") }
        #expect(try await store.read { db in try db.value("SELECT count(*) FROM articles_fts_docsize") } == .integer(3))
    }

    // MARK: Query plans and maintenance

    @Test func queryPlanUsesTheFeedAndReadIndex() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("plan.sqlite"))
        try await submitted(store) { changes in (0..<200).forEach { changes.insert(Article.make($0, read: $0 % 2 == 0)) } }

        let plan = try await store.explain(Query<Article>(where: Attribute("feedID") == 1 && Attribute("isRead") == false))
        #expect(plan.contains { $0.detail.contains("USING INDEX articles_feedID_isRead (feedID=? AND isRead=?)") },
                "\(plan.map(\.detail))")
        // A filter the index cannot serve scans the table instead.
        let scan = try await store.explain(Query<Article>(where: Attribute("title") == "Title 1"))
        #expect(!scan.contains { $0.detail.contains("articles_feedID_isRead") }, "\(scan.map(\.detail))")
        #expect(scan.contains { $0.detail.hasPrefix("SCAN") }, "\(scan.map(\.detail))")
        // The query the plan describes gives the right answer.
        let unreadInFeed1 = try await store.fetch(Query<Article>(where: Attribute("feedID") == 1 && Attribute("isRead") == false))
        #expect(unreadInFeed1.count == 20)
        #expect(unreadInFeed1.allSatisfy { $0.feedID == 1 && !$0.isRead })
    }

    @Test func integrityCheckAndTruncatingCheckpoint() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("checkpoint.sqlite")
        let store = try await openStore(path)
        try await submitted(store) { changes in bulkyArticles(300).forEach { changes.insert($0) } }
        try await store.deleteAll(Article.self, where: Attribute("feedID") == 3).committed()
        #expect(try await store.integrityProblems() == [])

        let wal = path + "-wal"
        #expect(try fileSize(wal) > 0)
        let passive = try await store.checkpoint(.passive)
        #expect(!passive.wasBlocked)
        #expect(passive.logFrames > 0)
        #expect(passive.checkpointedFrames == passive.logFrames)
        #expect(try fileSize(wal) > 0)  // a passive checkpoint does not shrink the WAL

        let truncate = try await store.checkpoint(.truncate)
        #expect(!truncate.wasBlocked)
        #expect(try fileSize(wal) == 0)
        #expect(try await store.count(Query<Article>()) == 270)
        #expect(try await store.integrityProblems() == [])
    }

    @Test func vacuumReclaimsTheSpaceOfDeletedRows() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("vacuum.sqlite"))
        try await submitted(store) { changes in bulkyArticles(2_000).forEach { changes.insert($0) } }
        try await store.deleteAll(Article.self, where: Attribute("feedID") != 7).committed()
        let pagesBefore = try await pragma(store, "page_count")
        #expect(try await pragma(store, "freelist_count") > 0)

        let reclaimed = try await store.vacuum()
        let pageSize = try await pragma(store, "page_size")
        #expect(reclaimed > 0)
        #expect(reclaimed % pageSize == 0)
        #expect(try await pragma(store, "page_count") * pageSize == pagesBefore * pageSize - reclaimed)
        #expect(try await pragma(store, "freelist_count") == 0)

        // The rows that were kept, and their full-text index, survive the rebuild.
        let kept = try await store.fetch(Query<Article>())
        #expect(ids(kept) == ids(bulkyArticles(2_000).filter { $0.feedID == 7 }.sorted { $0.id < $1.id }))
        #expect(try await store.ids(Query<Article>(where: .matches("title 17"))) == ["article-17"])
        try await store.write { db in try db.execute("INSERT INTO articles_fts(articles_fts) VALUES ('integrity-check')") }
        #expect(try await store.integrityProblems() == [])
    }

    @Test func incrementalVacuumFreesPagesWhenEnabled() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("incremental.sqlite")) { $0.incrementalVacuum = true }
        #expect(try await pragma(store, "auto_vacuum") == 2)  // INCREMENTAL
        try await submitted(store) { changes in bulkyArticles(1_000).forEach { changes.insert($0) } }
        try await store.deleteAll(Article.self, where: Attribute("feedID") != 0).committed()
        let free = try await pragma(store, "freelist_count")
        #expect(free > 2)

        #expect(try await store.incrementalVacuum(pages: 2) == 2)
        #expect(try await pragma(store, "freelist_count") == free - 2)
        #expect(try await store.incrementalVacuum() == Int(free - 2))
        #expect(try await pragma(store, "freelist_count") == 0)
        #expect(try await store.incrementalVacuum() == 0)
        #expect(try await store.count(Query<Article>()) == 100)
        #expect(try await store.integrityProblems() == [])

        // Without the option, the file keeps its free pages.
        let plain = try await openStore(directory.path("plain.sqlite"))
        #expect(try await pragma(plain, "auto_vacuum") == 0)
        try await submitted(plain) { changes in bulkyArticles(300).forEach { changes.insert($0) } }
        try await plain.deleteAll(Article.self, where: .all).committed()
        let plainFree = try await pragma(plain, "freelist_count")
        #expect(plainFree > 0)
        #expect(try await plain.incrementalVacuum() == 0)
        #expect(try await pragma(plain, "freelist_count") == plainFree)
    }

    // MARK: Errors

    @Test(arguments: [false, true])
    func statementErrorsCarrySQLAndArgumentsOnlyWhenPublic(_ isPublic: Bool) async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("errors.sqlite")) { $0.publicStatementArguments = isPublic }
        let sql = "INSERT INTO Feed (id, name) VALUES (?, ?)"
        let arguments: [DatabaseValue] = [.integer(1), .text("private feed name")]
        try await store.write { db in try db.execute(sql, arguments) }

        // Raw SQL.
        let raw = await #expect(throws: StrataError.self) { try await store.write { db in try db.execute(sql, arguments) } }
        #expect(raw?.code == .constraint)
        #expect(raw?.sql == sql)
        #expect(raw?.sqliteCode == 19)  // SQLITE_CONSTRAINT
        #expect(raw.flatMap { $0.extendedSQLiteCode.map { $0 & 0xFF } } == 19)
        #expect(raw?.arguments == (isPublic ? arguments : nil))
        #expect(raw?.description.contains("private feed name") == isPublic, "\(String(describing: raw))")

        // A change set: the failure names the entity and object and carries the SQL it ran.
        var changes = ChangeSet()
        changes.insert(Feed(id: 1, name: "another private name"))
        let saved = await #expect(throws: StrataError.self) { try await store.submit(changes).committed() }
        #expect(saved?.code == .constraint)
        #expect(saved?.entity == "Feed")
        #expect(saved?.objectID == "1")
        #expect(saved?.sql?.hasPrefix("INSERT INTO \"Feed\"") == true, "\(String(describing: saved?.sql))")
        #expect(saved?.arguments == (isPublic ? [.integer(1), .text("another private name")] : nil))
        #expect(saved?.description.contains("another private name") == isPublic, "\(String(describing: saved))")

        // A statement that cannot be prepared has SQL but no arguments to show.
        let syntax = await #expect(throws: StrataError.self) {
            _ = try await store.read { db in try db.rows("SELEC name FROM Feed WHERE id = ?", [.integer(1)]) }
        }
        #expect(syntax?.code == .sqlite)
        #expect(syntax?.sql == "SELEC name FROM Feed WHERE id = ?")
        #expect(syntax?.arguments == nil)
    }
}
