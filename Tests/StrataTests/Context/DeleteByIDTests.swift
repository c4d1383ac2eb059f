import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Deleting by ID works whether or not a context holds the object, and is idempotent: an ID the
/// store does not have is deleted without error (an update of a missing object fails instead).
@MainActor
@Suite struct DeleteByIDTests {
    private func seeded(_ directory: TemporaryDirectory) async throws -> Store {
        let store = try await openStore(directory.path("s.sqlite"))
        var changes = ChangeSet()
        for index in 1...5 { changes.insert(Article.make(index)) }
        try store.submit(changes)
        try await store.persist()
        return store
    }

    @Test func aWorkerDeletesAnObjectItNeverFetched() async throws {
        let directory = try TemporaryDirectory()
        let store = try await seeded(directory)
        let worker = store.makeWorkerContext(name: "sync")
        let (hadChanges, submission) = try await worker.perform { worker -> (Bool, Submission?) in
            try worker.delete(Article.self, id: "article-2")
            let hadChanges = worker.hasChanges
            return (hadChanges, try worker.save())
        }
        #expect(hadChanges)
        #expect(submission != nil)
        try await submission?.committed()
        #expect(try await store.fetch(Article.self, id: "article-2") == nil)
        #expect(try await store.count(Query<Article>()) == 4)
    }

    @Test func theMainContextDeletesAnObjectItDoesNotHold() async throws {
        let directory = try TemporaryDirectory()
        let store = try await seeded(directory)
        let main = store.mainContext
        var published: [ContextChange] = []
        let observation = main.onChange { published.append($0) }
        defer { observation.cancel() }
        #expect(main.registeredCount(Article.self) == 0)   // Article is not resident: nothing held
        try main.delete(Article.self, id: "article-3")
        #expect(main.hasChanges)
        let submission = try #require(try main.save())
        try await submission.committed()
        #expect(try await store.fetch(Article.self, id: "article-3") == nil)
        // Nothing the context showed changed: it publishes no deletion of an object it never held.
        await main.mergeAccepted()
        #expect(published.isEmpty)
        try await store.close()
    }

    @Test func deletingAnIDTheStoreDoesNotHaveSucceedsAndChangesNothing() async throws {
        // Deleting is idempotent everywhere: the object is absent afterwards, as asked. (An
        // update of a missing object fails: its values would be lost.)
        let directory = try TemporaryDirectory()
        let store = try await seeded(directory)
        let worker = store.makeWorkerContext(name: "sync")
        let submission = try await worker.perform { worker -> Submission? in
            try worker.delete(Article.self, id: "article-1")
            try worker.delete(Article.self, id: "no-such-article")
            return try worker.save()
        }
        try await #require(submission).committed()
        #expect(try await store.fetch(Article.self, id: "article-1") == nil)
        #expect(try await store.count(Query<Article>()) == 4)

        var changes = ChangeSet()
        changes.delete(Article.self, id: "no-such-article")
        changes.delete(Article.self, id: "article-2")
        changes.delete(Article.self, id: "article-2")       // twice in one change set
        try await store.submit(changes).committed()
        let main = store.mainContext
        try main.delete(Article.self, id: "no-such-article")
        try await #require(try main.save()).committed()
        #expect(try await store.count(Query<Article>()) == 3)

        var update = ChangeSet()
        update.update(Article.make(404))
        let error = await #expect(throws: StrataError.self) { try await store.submit(update).committed() }
        #expect(error?.code == .objectNotFound)
        try await store.close()
    }

    @Test func deleteAllSkipsIDsTheStoreDoesNotHave() async throws {
        let directory = try TemporaryDirectory()
        let store = try await seeded(directory)
        try await store.deleteAll(Article.self, ids: ["article-4", "never-synced"]).committed()
        #expect(try await store.count(Query<Article>()) == 4)
    }

    @Test func aBlindDeleteMeetsAConcurrentUpdateThroughTheMergePolicy() async throws {
        let directory = try TemporaryDirectory()
        let store = try await seeded(directory)
        let worker = store.makeWorkerContext(name: "sync", mergePolicy: .storeWins)
        try await worker.perform { worker in try worker.delete(Article.self, id: "article-5") }
        var edited = Article.make(5)
        edited.title = "edited elsewhere"
        var changes = ChangeSet()
        changes.update(edited)
        try await store.submit(changes).committed()
        // The store's newer copy wins: the blind delete is dropped, nothing is saved.
        let submission = try await worker.perform { worker in try worker.save() }
        #expect(submission == nil)
        #expect(try await store.fetch(Article.self, id: "article-5")?.title == "edited elsewhere")
    }
}
