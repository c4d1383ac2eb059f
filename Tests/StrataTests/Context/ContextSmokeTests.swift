import Foundation
@testable import Strata
import StrataTestSupport
import Testing

@MainActor
@Suite struct ContextSmokeTests {
    @Test func workerSaveReachesMainAndLiveQuery() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let main = store.mainContext
        let live = try main.observe(Query<Article>(where: Attribute("isRead") == false, sortedBy: [Attribute("published").descending]))
        var received: [ContextChange] = []
        let observation = main.onChange { received.append($0) }
        let worker = store.makeWorkerContext(name: "sync")
        try await worker.perform { worker in
            for index in 0..<20 { try worker.insert(Article.make(index)) }
            try worker.save()
        }
        try await store.persist()
        // Wait for the merge: the change stream delivers it on the main actor.
        var iterator = main.changes().makeAsyncIterator()
        if received.isEmpty { _ = await iterator.next() }
        #expect(received.count == 1)
        #expect(received.first?.origin == .context("sync"))
        #expect(received.first?.inserted(Article.self).count == 20)
        #expect(main.object(Article.self, id: "article-3") == Article.make(3))
        #expect(live.ids.count == 20)
        #expect(live.ids.first == "article-19")
        observation.cancel()
        try await store.close()
    }
}
