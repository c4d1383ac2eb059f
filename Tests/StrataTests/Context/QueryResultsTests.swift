import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `MainContext.results(matching:)`: IDs and rows as of the query, values built on access.
@MainActor
@Suite struct QueryResultsTests {
    @Test func resultsStayAsOfTheQueryAndValuesAreBuiltFromTheirRows() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        var changes = ChangeSet()
        for index in 0..<20 { changes.insert(ResidentArticle(index, read: index % 2 == 0)) }
        try await store.submit(changes).committed()
        let main = store.mainContext
        try await main.loadResidentEntities()

        let query = Query<ResidentArticle>(where: Attribute("isRead") == false,
                                           sortedBy: [Attribute("published").descending], limit: 3)
        let page = try main.results(matching: query)
        #expect(page.ids == ["r-19", "r-17", "r-15"])
        #expect(page.count == 3)
        #expect(page[1] == ResidentArticle(17))
        #expect(try page.value(at: 2) == ResidentArticle(15))

        // The context changes; the results do not.
        var read = ResidentArticle(19)
        read.isRead = true
        try main.update(read)
        try main.save()
        #expect(try main.results(matching: query).ids == ["r-17", "r-15", "r-13"])
        #expect(page.ids == ["r-19", "r-17", "r-15"] && page[0] == ResidentArticle(19))
        try await store.close()
    }

    @Test func anEditOfAResultIsBasedOnTheCopyTheQueryRead() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        var changes = ChangeSet()
        changes.insert(ResidentArticle(1))
        try await store.submit(changes).committed()
        let main = store.mainContext
        main.mergePolicy = .reportConflict
        try await main.loadResidentEntities()
        let page = try main.results(matching: Query<ResidentArticle>())

        // Another worker changes the object after the query read it.
        let remote = store.makeWorkerContext(name: "remote")
        _ = try await remote.fetch(Query<ResidentArticle>())
        try await remote.perform { worker in
            var article = ResidentArticle(1)
            article.title = "remote"
            try worker.update(article)
            try worker.save()
        }
        await main.mergeAccepted()

        var edited = page[0]
        edited.isStarred = true
        try main.update(edited)
        let error = try #require(throws: StrataError.self) { try main.save() }
        #expect(error.code == .conflict)
        try await store.close()
    }
}
