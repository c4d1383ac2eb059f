import Strata

extension DemoRunner {
    /// 5. Full-text search over titles and summaries. Across every article, SQLite's FTS5 index
    /// finds the IDs and the main context shows the objects from memory; within one feed's unread
    /// articles, the main context searches in memory (its `(feedID, isRead)` index picks the
    /// candidates) — and agrees with SQLite.
    func search() async throws {
        heading(5, "Full-text search over titles and summaries")
        let start = clock.now
        var details: [(String, JSONValue)] = []
        for text in ["swift concurr*", "sqlite snapshots"] {
            let query = Query<Article>(where: .matches(text), sortedBy: [Attribute("published").descending])
            let searchStart = clock.now
            let ids = try await store.ids(query)
            let shown = try await main.materialize(Article.self, ids: Array(ids.prefix(Self.unreadQuery.limit ?? 50)))
            let elapsed = clock.now - searchStart
            say("   \"\(text)\": \(Format.count(ids.count, "match", plural: "matches")) in SQLite FTS5, "
                + "first \(shown.count) on screen from memory, in \(Format.duration(elapsed))")
            if let first = shown.first { say("      newest: \"\(first.title)\"") }
            details.append((text, .int(ids.count)))
        }

        let feedID = counts.unreadByFeed.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }?.key ?? 1
        let feed = main.object(Feed.self, id: feedID)?.title ?? "feed \(feedID)"
        let local = Query<Article>(where: .matches("swift") && Attribute("feedID") == feedID && Attribute("isRead") == false,
                                   sortedBy: [Attribute("published").descending])
        let memoryStart = clock.now
        let inMemory = try main.objects(matching: local).map(\.id)
        let memoryTime = clock.now - memoryStart
        let sqlStart = clock.now
        let inSQLite = try await store.ids(local)
        let sqlTime = clock.now - sqlStart
        say("   \"swift\" among the unread of \(feed): \(Format.count(inMemory.count, "match", plural: "matches")) in memory "
            + "(\(Format.duration(memoryTime))) \(inMemory == inSQLite ? "=" : "≠") \(Format.count(inSQLite.count)) "
            + "in SQLite (\(Format.duration(sqlTime)))")
        details.append(("swift in \(feed), unread", .int(inMemory.count)))
        report.checks.append(("in-memory search = SQLite search", inMemory == inSQLite))
        record(5, "full-text search", (clock.now - start).seconds, details)
    }
}
