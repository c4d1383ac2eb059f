import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Which context saves first, while the other holds an unsaved edit of the same object.
enum SaveOrder: String, CaseIterable, Sendable { case workerSavesLast, mainSavesLast }

/// The default merge policy loses no edit: with contexts left at their default, a worker and the
/// main context editing one object in either order both keep what they changed; when both
/// changed the same attribute, the later save's value is the one stored.
@MainActor
@Suite struct DefaultMergePolicyTests {
    @Test func bothContextsDefaultToMergingProperties() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        #expect(store.mainContext.mergePolicy == .mergeProperties)
        #expect(await store.makeWorkerContext().mergePolicy == .mergeProperties)
        try await store.close()
    }

    @Test(arguments: SaveOrder.allCases, [false, true])
    func editsOfOneObjectByAWorkerAndTheMainContextAreAllKept(order: SaveOrder, sameAttribute: Bool) async throws {
        let label = "\(order) sameAttribute \(sameAttribute)"
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var changes = ChangeSet()
        changes.insert(Article.make(1))
        try store.submit(changes)
        try await store.persist()
        let main = store.mainContext
        let worker = store.makeWorkerContext(name: "editor")
        _ = try await main.fetch(Query<Article>())
        _ = try await worker.fetch(Query<Article>())

        // The main context edits the title; the worker the summary (or the title too).
        var byMain = try #require(main.object(Article.self, id: "article-1"))
        byMain.title = "title from main"
        var byWorker = try #require(await worker.object(Article.self, id: "article-1"))
        if sameAttribute { byWorker.title = "title from worker" } else { byWorker.summary = "summary from worker" }
        try main.update(byMain)
        try await worker.update(byWorker)
        switch order {
        case .workerSavesLast:
            try main.save()
            try await worker.save()
        case .mainSavesLast:
            try await worker.save()
            await main.mergeAccepted()
            try main.save()
        }
        try await store.persist()
        await main.mergeAccepted()

        var expected = Article.make(1)
        if sameAttribute {
            expected.title = order == .workerSavesLast ? "title from worker" : "title from main"
        } else {
            expected.title = "title from main"
            expected.summary = "summary from worker"
        }
        #expect(try await store.fetch(Article.self, id: "article-1") == expected, "\(label): stored")
        #expect(main.object(Article.self, id: "article-1") == expected, "\(label): shown by main")
        #expect(await worker.object(Article.self, id: "article-1") == expected, "\(label): held by the worker")
        try await store.close()
    }

    @Test func mainContextDeletesByIDsAndByFilterAndShowsItWhenItReturns() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var changes = ChangeSet()
        for index in 1...30 { changes.insert(Article.make(index)) }
        try store.submit(changes)
        try await store.persist()
        let main = store.mainContext
        _ = try await main.fetch(Query<Article>())
        let feedThree = Query<Article>(where: Attribute("feedID") == Int64(3))
        let live = try main.observe(feedThree)
        #expect(live.ids.count == 3)

        try await main.deleteAll(Article.self, ids: ["article-1", "article-2", "missing"])
        #expect(main.object(Article.self, id: "article-1") == nil && main.object(Article.self, id: "article-2") == nil)
        try await main.deleteAll(Article.self, where: Attribute("feedID") == Int64(3))
        #expect(try main.ids(matching: feedThree).isEmpty)
        #expect(live.ids.isEmpty)
        try await store.persist()
        #expect(try await store.count(Query<Article>()) == 25)
        #expect(try await store.count(feedThree) == 0)
        #expect(main.objects(Article.self).count == 25)
        try await store.close()
    }
}
