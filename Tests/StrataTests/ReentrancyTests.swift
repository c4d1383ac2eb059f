import Foundation
@testable import Strata
import Testing

/// Every reentrant pattern the API allows finishes; each runs under a watchdog so that a
/// deadlock fails the test instead of hanging CI.
@MainActor
@Suite struct ReentrancyTests {
    @Test func workerCallsItselfInsidePerform() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let worker = store.makeWorkerContext()
        let count = try await withWatchdog {
            try await worker.perform { worker in
                // Calls on the same worker inside perform run inline.
                try worker.insert(Article.make(1))
                let nested = try worker.atomically { () throws -> Int in
                    try worker.insert(Article.make(2))
                    return try worker.objects(matching: Query<Article>()).count
                }
                try worker.save()
                return nested
            }
        }
        #expect(count == 2)
        try await store.persist()
        #expect(try await store.count(Query<Article>()) == 2)
    }

    @Test func scopedEditsRollBackWhenTheBlockThrows() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let worker = store.makeWorkerContext()
        struct Abort: Error {}
        await worker.perform { worker in
            _ = try? worker.insert(Article.make(1))
            #expect(throws: Abort.self) {
                try worker.atomically {
                    try worker.insert(Article.make(2))
                    throw Abort()
                }
            }
        }
        #expect(await worker.object(Article.self, id: "article-1") != nil)
        #expect(await worker.object(Article.self, id: "article-2") == nil)
        await worker.rollback()
        #expect(await worker.hasChanges == false)
    }

    @Test func storeCallsFromInsideTheRootQueue() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        // Submitting from inside a write closure (on the root queue) does not block: it is
        // queued behind the closure and committed after it.
        let submission = try await withWatchdog {
            try await store.write { db -> Submission in
                try db.execute("CREATE TABLE IF NOT EXISTS marks (x)")
                var changes = ChangeSet()
                changes.insert(Article.make(9))
                return try store.submit(changes)
            }
        }
        try await withWatchdog { try await submission.committed() }
        #expect(try await store.fetch(Article.self, id: "article-9") != nil)
        // A custom SQL function that submits while SQLite evaluates a statement.
        try await store.register(SQLFunction("submit_one", argumentCount: 1) { [weak store] arguments in
            var changes = ChangeSet()
            changes.upsert(Article.make(Int(arguments[0] == .integer(1) ? 10 : 11)))
            _ = try store?.submit(changes)
            return .integer(1)
        })
        _ = try await withWatchdog { try await store.read { db in try db.value("SELECT submit_one(1)") } }
        try await withWatchdog { try await store.persist() }
        #expect(try await store.fetch(Article.self, id: "article-10") != nil)
    }

    @Test func mainSavesFromInsideItsOwnChangeHandler() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let main = store.mainContext
        var handled = 0
        let observation = main.onChange { change in
            handled += 1
            // Re-entering the context from an observer: edit and save again (once).
            if change.origin == .context("worker"), var article = main.object(Article.self, id: "article-1") {
                article.isStarred = true
                try? main.update(article)
                _ = try? main.save()
            }
        }
        let worker = store.makeWorkerContext()
        try await worker.insert(Article.make(1))
        try await worker.save()
        main.mergePending()
        #expect(handled == 2)   // the worker's merge, then the main context's own save
        #expect(main.object(Article.self, id: "article-1")?.isStarred == true)
        try await withWatchdog { try await store.persist() }
        #expect(try await store.fetch(Article.self, id: "article-1")?.isStarred == true)
        observation.cancel()
    }
}
