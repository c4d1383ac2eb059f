import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `IN` is a hashed lookup in memory, with SQL's semantics, and a key list never makes more
/// candidates than the objects a context shows (timings are the benchmarks' business; these
/// tests pin the structure and the results).
@MainActor
@Suite struct InFilterTests {
    private func schema() throws -> EntitySchema { try SchemaRegistry([Article.self]).schema(for: Article.self) }

    @Test func anInListIsHashedOnceAndKeepsItsValuesForSQL() throws {
        let ids = (0..<10_000).map { "article-\($0)" }
        let resolved = try ResolvedFilter(Attribute("id").in(ids), schema: schema())
        guard case .isIn(_, let list) = resolved.node else {
            Issue.record("expected an IN node, got \(resolved.node)")
            return
        }
        #expect(list.values == ids.map { DatabaseValue.text($0) })
        let (sql, arguments) = resolved.sql()
        #expect(arguments.count == 10_000)
        #expect(sql.hasPrefix("\"uniqueID\" IN (?,?"))
        #expect(list.contains(.text("article-9999")) == true)
        #expect(list.contains(.text("article-10000")) == false)
    }

    @Test func inMemoryInFollowsSQLForNumbersAndNull() throws {
        let list = ResolvedFilter.InList([.integer(1), .real(2.5), .real(3.0), .integer(Int64.max)])
        #expect(list.contains(.real(1.0)) == true)          // 1.0 IN (1)
        #expect(list.contains(.integer(3)) == true)         // 3 IN (3.0)
        #expect(list.contains(.real(-0.0)) == false)
        #expect(list.contains(.real(2.5)) == true)
        #expect(list.contains(.real(9_223_372_036_854_775_808)) == false)  // 2^63 is past Int64.max
        #expect(list.contains(.null) == nil)
        let withNull = ResolvedFilter.InList([.integer(1), .null])
        #expect(withNull.contains(.integer(2)) == nil)      // 2 IN (1, NULL) is unknown
        #expect(withNull.contains(.integer(1)) == true)
        #expect(ResolvedFilter.InList([]).contains(.null) == false)
        let zero = ResolvedFilter.InList([.real(-0.0)])
        #expect(zero.contains(.integer(0)) == true)
    }

    @Test func aKeyListLongerThanTheContextScansTheContextInstead() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        var changes = ChangeSet()
        for index in 0..<100 { changes.insert(ResidentArticle(index)) }
        try store.submit(changes)
        try await store.persist()
        let main = store.mainContext
        try await main.loadResidentEntities()

        let table = try main.graph.table(ResidentArticle.self)
        let many = (0..<10_000).map { "r-\($0 * 3)" }
        let filter = try ResolvedFilter(Attribute("id").in(many), schema: table.schema)
        #expect(try table.candidateKeys(filter).count == 100, "bounded by the objects shown, not by the 10,000 keys")
        let few = try ResolvedFilter(Attribute("id").in(["r-1", "r-2", "r-1", "r-404"]), schema: table.schema)
        #expect(try table.candidateKeys(few) == ["r-1", "r-2"].map(\.databaseValue), "each listed key the context holds, once")

        let query = Query<ResidentArticle>(where: Attribute("id").in(many), sortedBy: [Attribute("id").ascending])
        let inMemory = try main.objects(matching: query)
        #expect(inMemory.count == 34)                       // r-0, r-3, …, r-99
        #expect(inMemory == (try await store.fetch(query)))
        try await store.close()
    }

    @Test func duplicateKeysMatchOnceAsInSQL() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        var changes = ChangeSet()
        for index in 0..<3 { changes.insert(ResidentArticle(index)) }
        try store.submit(changes)
        try await store.persist()
        let main = store.mainContext
        try await main.loadResidentEntities()
        let query = Query<ResidentArticle>(where: Attribute("id").in(["r-1", "r-1", "r-2"]))
        let fromSQL = try await store.fetch(query)
        #expect(fromSQL.count == 2)
        #expect(try main.objects(matching: query).count == 2)
        #expect(try main.count(matching: query) == 2)
        try await store.close()
    }

    @Test func aBulkUpdateByKeysAndFilterPatchesOnlyWhatSQLUpdated() async throws {
        // A key list ANDed with another condition: the context patches the objects SQL changed,
        // not every listed key it holds.
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        var changes = ChangeSet()
        for index in 0..<20 { changes.insert(ResidentArticle(index)) }
        try store.submit(changes)
        try await store.persist()
        let main = store.mainContext
        try await main.loadResidentEntities()
        let ids = (0..<20).map { "r-\($0)" }
        let filter: Filter = Attribute("id").in(ids) && Attribute("feedID") == 3
        try await main.updateAll(ResidentArticle.self, where: filter, set: ["isRead": true]).committed()
        let shown = main.objects(ResidentArticle.self).filter(\.isRead).map(\.id).sorted()
        let stored = try await store.fetch(Query<ResidentArticle>(where: Attribute("isRead") == true)).map(\.id).sorted()
        #expect(stored == ["r-13", "r-3"])
        #expect(shown == stored)
        try await store.close()
    }
}
