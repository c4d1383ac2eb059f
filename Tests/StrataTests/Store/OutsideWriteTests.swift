import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The note another process writes (`StrataProbe outside-writer` declares the same type).
private struct OutsideNote: Entity, Equatable {
    var id: String
    var title: String
    var body: String
}

private let original = ConflictEdits.original
/// The local edit, and what the outside writer sets (`outsideUpdateSQL`): other attributes.
private func localEdit(_ article: Article) -> Article { ConflictEdits.local(article) }
private func outsideEdit(_ article: Article) -> Article { ConflictEdits.remote(article) }
private let outsideUpdateSQL = "UPDATE articles SET summary = 'remote summary', isStarred = 1 WHERE uniqueID = 'article-1'"
private let outsideDeleteSQL = "DELETE FROM articles WHERE uniqueID = 'article-1'"

/// When the outside writer commits, relative to the context's edit and save.
enum OutsideTiming: String, CaseIterable, Sendable {
    /// After the edit, before the save, with no read in between and the file watcher stopped: the
    /// writer finds it in the transaction that writes the save.
    case beforeSaveUnseen
    /// After the edit; a fetch then takes it in, and the context resolves it before saving.
    case seenByFetch
    /// After the edit; the file watcher wakes the store, which tells the context, and the context
    /// resolves it before saving.
    case seenLive
}

/// What the store should hold once everything is written, and whether the context keeps the edit
/// as a conflict (``MergePolicy/reportConflict``).
private func expected(_ policy: MergePolicy, _ kind: ConflictKind) -> (stored: Article?, conflicted: Bool) {
    let local = localEdit(original), outside = outsideEdit(original)
    var merged = outside
    merged.title = local.title
    switch (kind, policy) {
    case (.updateUpdate, .localWins): return (local, false)
    case (.updateUpdate, .storeWins): return (outside, false)
    case (.updateUpdate, .mergeProperties): return (merged, false)
    case (.updateUpdate, .reportConflict): return (outside, true)
    case (.updateDelete, .localWins): return (local, false)
    case (.updateDelete, .storeWins), (.updateDelete, .mergeProperties): return (nil, false)
    case (.updateDelete, .reportConflict): return (nil, true)
    case (.deleteUpdate, .localWins), (.deleteUpdate, .mergeProperties): return (nil, false)
    case (.deleteUpdate, .storeWins): return (outside, false)
    case (.deleteUpdate, .reportConflict): return (outside, true)
    }
}

private let policies: [MergePolicy] = [.localWins, .storeWins, .mergeProperties, .reportConflict]

/// Changes committed to the file by someone other than the store — the `sqlite3` shell, another
/// process with its own store, ``Store/write(_:)`` — are never reverted or hidden: a fetch shows
/// them and refreshes the contexts and live queries, and a save made on an older copy is a
/// conflict resolved by the context's merge policy (RELIABILITY.md, promise 6).
@MainActor
@Suite struct OutsideWriteTests {
    @Test func aFetchAfterTheShellWroteShowsItInTheContextAndItsLiveQueries() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await openStore(path)
        let main = store.mainContext
        try store.submit({ var changes = ChangeSet(); for index in 1...40 { changes.insert(Article.make(index)) }; return changes }())
        try await store.persist()
        let query = Query<Article>(where: Attribute("feedID") == Int64(3), sortedBy: [Attribute("title").ascending])
        _ = try await main.fetch(Query<Article>())
        let live = try main.observe(query)
        var origins: [ContextChange.Origin] = []
        let observation = main.onChange { origins.append($0.origin) }
        defer { observation.cancel() }

        // The shell retitles article 3 and moves article 4 into feed 3 and inserts article 99 there.
        _ = try await ExternalTools.sqlite3(path, """
            UPDATE articles SET title = 'x' WHERE uniqueID = 'article-3';
            UPDATE articles SET feedID = 3 WHERE uniqueID = 'article-4';
            INSERT INTO articles SELECT 'article-99', feedID, 'Title 99', summary, url, published, isRead, isStarred
              FROM articles WHERE uniqueID = 'article-3';
            """)
        let fetched = try await main.fetch(Query<Article>(where: Attribute("id").in(["article-3", "article-4", "article-99"])))
        #expect(fetched.map(\.title).sorted() == ["Title 4", "Title 99", "x"])
        #expect(main.object(Article.self, id: "article-3")?.title == "x")
        #expect(main.object(Article.self, id: "article-99") != nil)
        #expect(live.ids == (try main.ids(matching: query)))
        #expect(live.ids.contains("article-4") && live.ids.contains("article-99"))
        #expect(live.values.first(where: { $0.id == "article-3" })?.title == "x")
        #expect(origins.contains(.remote))
        try await store.close()
    }

    @Test func anotherProcessCommitReachesTheContextAtTheNextFetch() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let (store, main) = try await notesStore(path)

        let probe = try ProbeRun(["outside-writer", path, "n1", "from the other process"], showErrors: true)
        #expect(await probe.line(startingWith: "result") == "result ok")
        #expect(await probe.exited().map(ProbeRun.exitCode) == 0)

        // The main context holds n1 at the store's last sequence; the fetch must not keep it.
        let fetched = try await main.fetch(Query<OutsideNote>())
        #expect(fetched == [OutsideNote(id: "n1", title: "from the other process", body: "body")])
        #expect(main.object(OutsideNote.self, id: "n1")?.title == "from the other process")
        try await store.close()
    }

    /// With no call by the app: the file watcher wakes the store, which tells the main context and
    /// its live queries. The store's own commits before it are never told back as remote.
    @Test func anotherProcessCommitReachesTheMainContextWithNoCallByTheApp() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let (store, main) = try await notesStore(path)
        let live = try main.observe(Query<OutsideNote>(where: Attribute("title") == "live"))
        let changes = main.changes()
        // The store's own commits: a main-context save and a worker's, both committed.
        try main.insert(OutsideNote(id: "own-1", title: "mine", body: ""))
        try main.save()
        let worker = store.makeWorkerContext(name: "worker")
        try await worker.insert(OutsideNote(id: "own-2", title: "mine", body: ""))
        try await worker.save()
        try await store.persist()

        let probe = try ProbeRun(["outside-writer", path, "n1", "live"], showErrors: true)
        #expect(await probe.line(startingWith: "result") == "result ok")
        _ = await probe.exited()
        var remote: ContextChange?
        while let change = await next(changes, within: 10) {
            if change.origin == .remote { remote = change; break }
        }
        let change = try #require(remote, "the other process's commit never reached the main context")
        #expect(change.updated(OutsideNote.self).keys.sorted() == ["n1"], "only the other process's object")
        #expect(change.inserted(OutsideNote.self).isEmpty)
        #expect(main.object(OutsideNote.self, id: "n1")?.title == "live")
        #expect(live.ids == ["n1"])
        try await store.close()
    }

    @Test func theShellsCommitReachesTheMainContextWithNoCallByTheApp() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let (store, main) = try await notesStore(path)
        let changes = main.changes()
        _ = try await ExternalTools.sqlite3(path, "UPDATE OutsideNote SET body = 'from the shell' WHERE id = 'n1'")
        let change = try #require(await next(changes, within: 10), "the shell's commit never reached the main context")
        #expect(change.origin == .remote)
        #expect(main.object(OutsideNote.self, id: "n1")?.body == "from the shell")
        try await store.close()
    }

    @Test func anotherProcessEditOfOneAttributeAndAnUnsavedEditOfAnotherBothSurvive() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("notes.sqlite")
        let (store, main) = try await notesStore(path)
        var edited = try #require(main.object(OutsideNote.self, id: "n1"))
        edited.body = "edited body"
        try main.update(edited)

        let probe = try ProbeRun(["outside-writer", path, "n1", "outside title"], showErrors: true)
        #expect(await probe.line(startingWith: "result") == "result ok")
        _ = await probe.exited()
        try main.save()     // made on the copy from before the other process's commit
        try await store.persist()

        let expected = OutsideNote(id: "n1", title: "outside title", body: "edited body")
        #expect(try await ExternalTools.sqlite3(path, "SELECT title || '|' || body FROM OutsideNote") == ["outside title|edited body"])
        await main.mergeAccepted()
        #expect(main.object(OutsideNote.self, id: "n1") == expected)
        try await store.close()
    }

    @Test func storeWriteReachesTheContextsAsARemoteChange() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let main = store.mainContext
        try main.insert(original)
        try main.save()
        let stream = main.changes()
        try await store.write { db in try db.execute("UPDATE articles SET title = 'written' WHERE uniqueID = 'article-1'") }
        let change = try #require(await next(stream, within: 10), "no change reached the main context")
        #expect(change.origin == .remote)
        #expect(change.updated(Article.self)[original.id]?.contains("title") == true)
        #expect(main.object(Article.self, id: original.id)?.title == "written")
        try await store.close()
    }

    /// The conflict matrix against an outside writer (the `sqlite3` shell), for both contexts and
    /// every timing (``OutsideTiming``): what the file holds afterwards is checked through the shell (another
    /// connection), and equals what the context shows.
    @Test(arguments: policies, ConflictKind.allCases)
    func mainContextSaveAgainstTheShell(policy: MergePolicy, kind: ConflictKind) async throws {
        for timing in OutsideTiming.allCases {
            try await mainContextCase(policy: policy, kind: kind, timing: timing)
        }
    }

    private func mainContextCase(policy: MergePolicy, kind: ConflictKind, timing: OutsideTiming) async throws {
        let label = "\(policy) \(kind) \(timing)"
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await seededStore(path)
        if timing == .beforeSaveUnseen { store.stopWatchingOutsideCommits() }
        let main = store.mainContext
        main.mergePolicy = policy
        _ = try await main.fetch(Query<Article>())
        if kind == .deleteUpdate { try main.delete(Article.self, id: original.id) } else { try main.update(localEdit(original)) }

        let changes = main.changes()
        _ = try await ExternalTools.sqlite3(path, kind == .updateDelete ? outsideDeleteSQL : outsideUpdateSQL)
        let outcome = expected(policy, kind)
        if timing != .beforeSaveUnseen {
            if timing == .seenByFetch {
                _ = try await main.fetch(Query<Article>(where: Attribute("id") == original.id))
            } else {
                let change = await next(changes, within: 10)
                #expect(change?.origin == .remote, "\(label): the watcher told the context")
            }
            #expect(main.conflictingIDs == (outcome.conflicted ? [original.id.databaseValue] : []), "\(label): conflicted")
            if outcome.conflicted {
                let error = try #require(throws: StrataError.self, "\(label)") { try main.save() }
                #expect(error.code == .conflict)
            } else {
                try main.save()
            }
            try await store.persist()
        } else {
            try main.save()
            if outcome.conflicted {
                let error = await #expect(throws: StrataError.self, "\(label)") { try await store.persist() }
                #expect(error?.code == .conflict, "\(label)")
            } else {
                try await store.persist()
            }
            await main.mergeAccepted()
            #expect(main.conflictingIDs == (outcome.conflicted ? [original.id.databaseValue] : []), "\(label): conflicted")
        }
        #expect(try await storedThroughTheShell(path) == outcome.stored, "\(label): stored")
        await main.mergeAccepted()
        if outcome.conflicted {
            // The edit is kept, marked; taking the stored copy for that one object ends the conflict.
            let shown = main.object(Article.self, id: original.id)
            #expect(shown == (kind == .deleteUpdate ? nil : localEdit(original)), "\(label): the edit is kept")
            try main.resolveConflict(Article.self, id: original.id, by: .takeStored)
            #expect(main.conflictingIDs.isEmpty)
            #expect(try main.save() == nil)
        }
        #expect(main.object(Article.self, id: original.id) == outcome.stored, "\(label): shown")
        try await store.close()
    }

    @Test(arguments: policies, ConflictKind.allCases)
    func workerSaveAgainstTheShell(policy: MergePolicy, kind: ConflictKind) async throws {
        let label = "\(policy) \(kind)"
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await seededStore(path)
        store.stopWatchingOutsideCommits()   // the worker does not see it: the writer must
        let worker = try await ConflictEdits.localWorker(store, policy: policy, kind: kind)
        _ = try await ExternalTools.sqlite3(path, kind == .updateDelete ? outsideDeleteSQL : outsideUpdateSQL)
        try await worker.save()
        let outcome = expected(policy, kind)
        if outcome.conflicted {
            await #expect(throws: StrataError.self, "\(label)") { try await store.persist() }
            #expect(await worker.conflictingIDs == [original.id.databaseValue], "\(label): the edit is back, marked")
            if kind != .deleteUpdate {
                // Applied again on top of the stored copy: both edits survive where both exist.
                try await worker.resolveConflict(Article.self, id: original.id, by: .reapplyEdit)
                try await worker.save()
                try await store.persist()
                var merged = outsideEdit(original)
                merged.title = localEdit(original).title
                let reapplied = kind == .updateUpdate ? merged : localEdit(original)
                #expect(try await storedThroughTheShell(path) == reapplied, "\(label): re-applied")
                try await store.close()
                return
            }
        } else {
            try await store.persist()
        }
        #expect(try await storedThroughTheShell(path) == outcome.stored, "\(label): stored")
        try await store.close()
    }

    @Test func reportConflictResolvesOneObjectAndKeepsTheOtherEdits() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await openStore(path)
        try store.submit({ var changes = ChangeSet(); changes.insert(Article.make(1)); changes.insert(Article.make(2)); return changes }())
        try await store.persist()
        let main = store.mainContext
        main.mergePolicy = .reportConflict
        _ = try await main.fetch(Query<Article>())
        try main.update(localEdit(Article.make(1)))
        var second = Article.make(2)
        second.isRead = true
        try main.update(second)
        _ = try await ExternalTools.sqlite3(path, outsideUpdateSQL)
        _ = try await main.fetch(Query<Article>(where: Attribute("id") == "article-1"))
        #expect(main.conflictingIDs == ["article-1".databaseValue])
        #expect(throws: StrataError.self) { try main.save() }

        try main.resolveConflict(Article.self, id: "article-1", by: .reapplyEdit)
        #expect(main.conflictingIDs.isEmpty)
        #expect(main.object(Article.self, id: "article-2")?.isRead == true, "the other edit is untouched")
        try main.save()
        try await store.persist()
        var merged = outsideEdit(original)
        merged.title = localEdit(original).title
        #expect(try await storedThroughTheShell(path) == merged)
        #expect(try await store.fetch(Article.self, id: "article-2")?.isRead == true)
        #expect(throws: StrataError.self) { try main.resolveConflict(Article.self, id: "article-2", by: .takeStored) }
        try await store.close()
    }

    /// A store of notes holding note n1, saved through its main context.
    private func notesStore(_ path: String) async throws -> (Store, MainContext) {
        let store = try await Store.open(at: path, entities: [OutsideNote.self])
        let main = store.mainContext
        try main.insert(OutsideNote(id: "n1", title: "first", body: "body"))
        try main.save()
        try await store.persist()
        return (store, main)
    }

    private func seededStore(_ path: String) async throws -> Store {
        let store = try await openStore(path)
        var changes = ChangeSet()
        changes.insert(original)
        try store.submit(changes)
        try await store.persist()
        return store
    }

    /// Article 1 as the file holds it, read by the `sqlite3` shell (another connection); nil when absent.
    private func storedThroughTheShell(_ path: String) async throws -> Article? {
        let lines = try await ExternalTools.sqlite3(path, "SELECT title, coalesce(summary, '<null>'), isStarred FROM articles WHERE uniqueID = 'article-1'")
        guard let line = lines.first else { return nil }
        let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        try #require(fields.count == 3, "unexpected shell output \(lines)")
        var article = original
        article.title = fields[0]
        article.summary = fields[1] == "<null>" ? nil : fields[1]
        article.isStarred = fields[2] == "1"
        return article
    }
}
