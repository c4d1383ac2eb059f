import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// What an app observes: a live query's results as an asynchronous sequence and its failures,
/// the main context's own failures, waiting for a save to reach the main context, typed conflicts.
@MainActor
@Suite(.hangWatchdog) struct ObservationTests {
    @Test func aLiveQuerysResultsArriveAsASequence() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [Note.self])
        let main = store.mainContext
        try await main.loadResidentEntities()
        let live = try main.observe(Query<Note>(where: Attribute("isDone") == false, sortedBy: [Attribute("id").ascending]))
        var results = live.results().makeAsyncIterator()
        #expect(try await results.next(isolation: #isolation)?.isEmpty == true, "the current result first")

        let worker = store.makeWorkerContext()
        let saved = try await worker.perform { worker -> Submission? in
            try worker.insert(Note(id: 1, group: 0, score: 1, label: nil, isDone: false))
            try worker.insert(Note(id: 2, group: 0, score: 2, label: nil, isDone: true))
            return try worker.save()
        }
        await saved?.mergedIntoMainContext()
        #expect(try await results.next(isolation: #isolation)?.map(\.id) == [1])

        try main.insert(Note(id: 3, group: 1, score: 3, label: nil, isDone: false))
        try main.save()
        #expect(try await results.next(isolation: #isolation)?.map(\.id) == [1, 3])
        live.cancel()
        #expect(try await results.next(isolation: #isolation) == nil, "cancelling ends the sequence")
        #expect(live.error == nil)
        try await store.close()
    }

    @Test func aLiveQueryThatCannotStayCurrentSaysSo() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let main = store.mainContext
        let failures = main.failures()
        try await store.close()
        // Article is not resident: the live query fetches its objects, and the store is closed.
        let live = try main.observe(Query<Article>())
        var results = live.results().makeAsyncIterator()
        _ = try await results.next(isolation: #isolation)            // the (empty) current result
        let thrown = await #expect(throws: StrataError.self) { _ = try await results.next(isolation: #isolation) }
        #expect(thrown?.code == .closed)
        #expect(live.error?.code == .closed)
        #expect(await next(failures, within: 30)?.code == .closed, "the app hears of it, not only the log")
        // A sequence asked for afterwards fails at once.
        var late = live.results().makeAsyncIterator()
        await #expect(throws: StrataError.self) { _ = try await late.next(isolation: #isolation) }
    }

    @Test func awaitingTheMergeOfASubmissionNeverHangs() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var seed = ChangeSet()
        seed.insert(Article.make(1))
        // No main context yet: nothing to wait for.
        await (try store.submit(seed)).mergedIntoMainContext()

        let main = store.mainContext
        var published: [UInt64] = []
        let observation = main.onChange { published.append($0.sequence) }
        defer { observation.cancel() }

        // A change the main context shows: merged when the await returns.
        let worker = store.makeWorkerContext()
        let saved = try await worker.perform { worker -> Submission? in
            try worker.insert(Article.make(2))
            return try worker.save()
        }
        let submission = try #require(saved)
        await submission.mergedIntoMainContext()
        #expect(main.object(Article.self, id: "article-2") != nil)
        #expect(published.contains(submission.sequence))

        // A change that alters nothing the main context shows (a deletion of an object it does not
        // hold): nothing is published, and the await still returns.
        var untouched = ChangeSet()
        untouched.delete(Article.self, id: "never-held")
        let quiet = try store.submit(untouched)
        await quiet.mergedIntoMainContext()
        #expect(!published.contains(quiet.sequence))
        #expect(main.graph.mergedSequence >= quiet.sequence)

        // The main context's own save.
        try main.insert(Article.make(3))
        let own = try #require(try main.save())
        await own.mergedIntoMainContext()
        try await store.persist()
        try await store.close()
    }

    @Test func conflictingIDsAreTyped() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var seed = ChangeSet()
        for index in 1...3 { seed.insert(Article.make(index)) }
        try await store.submit(seed).committed()
        let main = store.mainContext
        main.mergePolicy = .reportConflict
        for article in try await main.fetch(Query<Article>()) {
            var edited = article
            edited.isStarred = true
            try main.update(edited)
        }
        var elsewhere = ChangeSet()
        for index in [3, 1] {
            var article = Article.make(index)
            article.title = "changed elsewhere"
            elsewhere.update(article)
        }
        await (try store.submit(elsewhere)).mergedIntoMainContext()
        #expect(main.conflictingIDs(Article.self) == ["article-1", "article-3"])
        #expect(main.conflictingIDs(Feed.self).isEmpty)
        #expect(Set(main.conflictingIDs) == [.text("article-1"), .text("article-3")])
        try await store.close()
    }
}
