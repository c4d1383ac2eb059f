import Strata

extension DemoRunner {
    /// 4. The user stars articles and edits one on the main context while a worker, syncing,
    /// updates the same article: the main context's merge policy decides, attribute by attribute.
    func mergeConflict() async throws {
        let policy = MergePolicy.mergeProperties
        heading(4, "Merge conflict — main context policy \(policy)")
        let start = clock.now
        main.mergePolicy = policy
        let top = unreadList.values
        guard top.count >= StepRequirements.conflictArticles else {
            // StepRequirements refuses options that lead here: never end the step silently.
            throw CLIFailure(exitCode: ExitStatus.failure, "the merge conflict needs \(StepRequirements.conflictArticles) "
                             + "unread articles and \(top.count) \(top.count == 1 ? "is" : "are") left")
        }
        let starredNow = top.prefix(min(5, top.count - 1))
        for var article in starredNow {
            article.isStarred = true
            try main.update(article)
        }
        try main.save()
        say("   starred \(Format.count(starredNow.count, "article")) on the main context (saved)")

        // The user edits an article; before saving, a worker marks it read and saves first.
        let original = top[starredNow.count]
        var edit = original
        edit.title = original.title + " (edited)"
        edit.isStarred = true
        try main.update(edit)
        let id = original.id
        let worker = store.makeWorkerContext(name: "sync-read-state")
        _ = try await worker.fetch(Query<Article>(where: Attribute("id") == id))
        try await worker.perform { worker in
            guard var copy = worker.object(Article.self, id: id) else { return }
            copy.isRead = true
            try worker.update(copy)
            try worker.save()
        }
        say("   main context edits \(id) (title, isStarred, unsaved); worker \"\(worker.name)\" marks it read and saves first")
        // The reader refreshes the article: the worker's save merges into the edited copy.
        _ = try await main.fetch(Query<Article>(where: Attribute("id") == id))
        try main.save()
        try await store.persist()
        guard let stored = try await store.fetch(Article.self, id: id) else {
            throw CLIFailure(exitCode: ExitStatus.failure, "article \(id) vanished during the conflict step")
        }
        let elapsed = (clock.now - start).seconds

        var table = TextTable(["ATTRIBUTE", "MAIN CONTEXT", "WORKER", "STORED", "FROM"])
        let rows: [(String, String, String, String, String)] = [
            ("title", "\"…\(edit.title.suffix(12))\"", "-", "\"…\(stored.title.suffix(12))\"",
             stored.title == edit.title ? "main" : "worker"),
            ("isStarred", "\(edit.isStarred)", "-", "\(stored.isStarred)", stored.isStarred == edit.isStarred ? "main" : "worker"),
            ("isRead", "-", "true", "\(stored.isRead)", stored.isRead ? "worker" : "main"),
        ]
        for row in rows { table.add([row.0, row.1, row.2, row.3, row.4]) }
        for line in table.lines(indent: "   ") { say(line) }
        say("   \(policy): the attributes edited on the main context win; the rest take the worker's values")
        report.conflict = [
            ("policy", .string("\(policy)")), ("article", .string(id)), ("title", .string(stored.title)),
            ("titleFromMain", .bool(stored.title == edit.title)), ("isStarred", .bool(stored.isStarred)),
            ("isRead", .bool(stored.isRead)),
        ]
        record(4, "merge conflict", elapsed, [("starred", .int(starredNow.count + 1)), ("article", .string(id))])
    }
}
