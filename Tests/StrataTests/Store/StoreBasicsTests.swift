import Foundation
import Strata
import StrataTestSupport
import Testing

@Suite struct StoreBasicsTests {
    @Test func insertPersistReopenFindsEverything() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let articles = (0..<500).map { Article.make($0) }
        do {
            let store = try await openStore(path)
            #expect(store.wasCreated)
            var changes = ChangeSet()
            articles.forEach { changes.insert($0) }
            try store.submit(changes)
            try await store.persist()
            #expect(store.pendingCount == 0)
        }
        let reopened = try await openStore(path)
        #expect(!reopened.wasCreated)
        let fetched = try await reopened.fetch(Query<Article>())
        #expect(fetched == articles.sorted { $0.id < $1.id })
        #expect(try await reopened.fetch(Article.self, id: "article-7") == articles[7])
        #expect(try await reopened.count(Query<Article>(where: Attribute("feedID") == 3)) == 50)
    }
}
