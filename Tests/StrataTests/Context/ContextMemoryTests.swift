import CSQLite
import Foundation
@testable import Strata
import StrataTestSupport
import Testing

@MainActor
@Suite struct ContextMemoryTests {
    @Test func aChangeSetThatFailsAtCommitIsUndoneInTheMainContext() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var seed = ChangeSet()
        seed.insert(Article.make(1))
        try store.submit(seed)
        try await store.persist()
        let main = store.mainContext
        _ = try await main.fetch(Query<Article>())
        let changes = main.changes()

        // Accepted (and merged) at once, but SQLite will reject it: one update of a missing object.
        var failing = ChangeSet()
        var edited = Article.make(1)
        edited.title = "never committed"
        failing.update(edited)
        failing.update(Article.make(404))
        let submission = try store.submit(failing)
        await main.mergeAccepted()
        #expect(main.object(Article.self, id: "article-1")?.title == "never committed")
        #expect(main.object(Article.self, id: "article-404") != nil)

        await #expect(throws: StrataError.self) { try await submission.committed() }
        var iterator = changes.makeAsyncIterator()
        var reload: ContextChange?
        while let change = await iterator.next(isolation: #isolation) {
            if change.origin == .reload { reload = change; break }
        }
        #expect(reload?.deleted(Article.self) == ["article-404"])
        #expect(reload?.updated(Article.self)["article-1"] == ["title"])
        #expect(main.object(Article.self, id: "article-1") == Article.make(1))
        #expect(main.object(Article.self, id: "article-404") == nil)
        try await store.close()
    }

    @Test func workersDropCopiesTouchedByAFailedChangeSet() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var seed = ChangeSet()
        seed.insert(Article.make(1))
        try store.submit(seed)
        try await store.persist()
        let worker = store.makeWorkerContext()
        _ = try await worker.fetch(Query<Article>())
        var failing = ChangeSet()
        var edited = Article.make(1)
        edited.title = "never committed"
        failing.update(edited)
        failing.update(Article.make(404))
        await #expect(throws: StrataError.self) { try await store.submit(failing).committed() }
        // The worker no longer trusts its copy; a fetch brings the committed one back.
        #expect(await worker.object(Article.self, id: "article-1") == nil)
        #expect(try await worker.fetch(Query<Article>()) == [Article.make(1)])
    }

    @Test func nonResidentObjectsAreEvictedBeyondTheLimitExceptObservedOnes() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let main = store.mainContext
        main.registeredObjectLimit = 100
        var first = ChangeSet()
        for index in 0..<50 { first.insert(Article.make(index, feed: 1)) }
        try store.submit(first)
        await main.mergeAccepted()
        let observed = try main.observe(Query<Article>(where: Attribute("feedID") == 1))
        #expect(observed.ids.count == 50)
        for batch in 0..<5 {
            var changes = ChangeSet()
            for index in 0..<100 { changes.insert(Article.make(1_000 + batch * 100 + index, feed: 2)) }
            try store.submit(changes)
            await main.mergeAccepted()
        }
        #expect(main.registeredCount(Article.self) <= 100)
        // Objects a live query shows are never evicted.
        #expect(observed.ids.allSatisfy { main.object(Article.self, id: $0) != nil })
        #expect(observed.values.count == 50)
        // Resident entities are never evicted.
        var feeds = ChangeSet()
        for index in 0..<300 { feeds.insert(Feed(id: Int64(index), name: "feed \(index)")) }
        try store.submit(feeds)
        await main.mergeAccepted()
        #expect(main.registeredCount(Feed.self) == 300)
        try await store.persist()
        try await store.close()
    }
}

/// A small resident entity for the large-correction test.
struct CorrectedCounter: Entity, Equatable {
    var id: Int64
    var value: Int64
    static let isResident = true
}

@MainActor
@Suite struct LargeCorrectionTests {
    @Test(.hangWatchdog) func aFailedChangeSetOfMoreObjectsThanOneStatementBindsIsCorrectedWhole() async throws {
        // More IDs than one statement may bind: the re-read after the failure must go in chunks,
        // or the correction itself fails and the context keeps values SQLite never had. The
        // connection's limit is lowered to 500 (SQLite's default build allows 32,766; Debian's
        // 250,000), so 2,000 objects are enough to cross it.
        let count = 2_000
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [CorrectedCounter.self])
        try await store.onQueue { writer in _ = sqlite3_limit(writer.connection.handle, SQLITE_LIMIT_VARIABLE_NUMBER, 500) }
        var seed = ChangeSet()
        for id in 0..<count { seed.insert(CorrectedCounter(id: Int64(id), value: 0)) }
        try await store.submit(seed).committed()
        let main = store.mainContext
        try await main.loadResidentEntities()
        let failures = main.failures()
        var failing = ChangeSet()
        for id in 0..<count { failing.update(CorrectedCounter(id: Int64(id), value: 1)) }
        failing.update(CorrectedCounter(id: -1, value: 1))      // missing: the change set fails whole

        // Whichever comes first: the correction's reload, or a failure of the correction itself.
        var observation: ChangeObservation?
        var watcher: Task<Void, Never>?
        let corrected: Bool = await withCheckedContinuation { continuation in
            var answered = false
            func answer(_ value: Bool) {
                guard !answered else { return }
                answered = true
                continuation.resume(returning: value)
            }
            observation = main.onChange { change in if change.origin == .reload { answer(true) } }
            watcher = Task { @MainActor in for await _ in failures { answer(false); break } }
            do { try store.submit(failing) } catch { answer(false) }
        }
        observation?.cancel()
        watcher?.cancel()
        #expect(corrected, "the correction re-read every object")
        #expect(main.objects(CorrectedCounter.self).allSatisfy { $0.value == 0 }, "every optimistic value was corrected")
        #expect(main.object(CorrectedCounter.self, id: -1) == nil)
        #expect(main.registeredCount(CorrectedCounter.self) == count)
        // Nobody awaited the failed change set: `close()` reports its failure (and closes all the same).
        do {
            try await store.close()
        } catch let error as StrataError where error.code == .objectNotFound {}
    }
}
