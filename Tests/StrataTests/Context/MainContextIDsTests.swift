import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `MainContext.ids(matching:)` makes `String` IDs by concrete code and others generically: both
/// give the IDs of the objects `objects(matching:)` returns, in order.
@MainActor
@Suite struct MainContextIDsTests {
    @Test(.hangWatchdog)
    func idsAreThoseOfTheMatchingObjectsForTextAndIntegerIDs() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        var changes = ChangeSet()
        for index in 0..<300 { changes.insert(ResidentArticle(index)) }
        try await store.submit(changes).committed()
        let main = store.mainContext
        try await main.loadResidentEntities()
        for query in [Query<ResidentArticle>(where: Attribute("feedID") == 3, sortedBy: [Attribute("published").descending]),
                      Query<ResidentArticle>(sortedBy: [Attribute("title").ascending], limit: 40, offset: 7)] {
            let ids = try main.ids(matching: query)
            #expect(!ids.isEmpty)
            #expect(ids == (try main.objects(matching: query)).map(\.id))
        }
        // Integer keys take the generic path.
        let keys: [DatabaseValue] = [.integer(5), .integer(-2), .integer(1 << 40)]
        #expect(MainContext.ids(Triple.self, of: keys) == [5, -2, 1 << 40])
        #expect(MainContext.ids(ResidentArticle.self, of: [.text("a"), .text("ü")]) == ["a", "ü"])
        try await store.close()
    }
}
