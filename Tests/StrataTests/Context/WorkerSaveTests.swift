import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A worker's `save()` hands the change set to the store and returns: what it saved reaches the
/// worker's own copies when they are next read (`ObjectGraph.unappliedSaves`), before anything
/// else — a read, an edit, a later change set merged — can see them.
@Suite struct WorkerSaveTests {
    @Test(.hangWatchdog)
    func aSaveIsAppliedToTheWorkersCopiesBeforeAnythingReadsThem() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        let worker = store.makeWorkerContext(name: "import")
        try await worker.perform { worker in
            for index in 0..<100 { try worker.insert(ResidentArticle(index)) }
            try worker.save()
            #expect(worker.unappliedSaveCount == 1, "save() applies nothing to the worker's copies")
            #expect(worker.object(ResidentArticle.self, id: "r-5") == ResidentArticle(5))
            #expect(worker.unappliedSaveCount == 0)
            #expect(try worker.objects(matching: Query<ResidentArticle>()).count == 100)

            // Edits of saved objects are based on the saved copies, save after save.
            var article = ResidentArticle(5)
            article.title = "second"
            try worker.update(article)
            try worker.save()
            article.title = "third"
            try worker.update(article)
            try worker.save()
            try worker.delete(ResidentArticle.self, id: "r-6")
            try worker.save()
            #expect(worker.unappliedSaveCount == 1)
            #expect(worker.object(ResidentArticle.self, id: "r-6") == nil)
            #expect(worker.object(ResidentArticle.self, id: "r-5")?.title == "third")
        }
        try await store.persist()
        #expect(try await store.fetch(ResidentArticle.self, id: "r-5")?.title == "third")
        #expect(try await store.fetch(ResidentArticle.self, id: "r-6") == nil)
        #expect(try await store.count(Query<ResidentArticle>()) == 99)
    }

    @Test(.hangWatchdog)
    func aLaterChangeSetMergesOverTheWorkersOwnSave() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        let worker = store.makeWorkerContext(name: "first")
        try await worker.perform { worker in
            var article = ResidentArticle(1)
            article.title = "mine"
            try worker.insert(article)
            try worker.save()
        }
        // Another context changes the object after the save: the worker merges that change set
        // over its own save, not under it (nor skips it for an object it did not hold yet).
        let other = store.makeWorkerContext(name: "second")
        _ = try await other.fetch(Query<ResidentArticle>())
        try await other.perform { other in
            guard var article = other.object(ResidentArticle.self, id: "r-1") else {
                Issue.record("the other worker does not hold r-1")
                return
            }
            article.title = "theirs"
            try other.update(article)
            try other.save()
        }
        let shown = await worker.perform { worker in worker.object(ResidentArticle.self, id: "r-1")?.title }
        #expect(shown == "theirs")
    }
}
