import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A site whose homepage may be missing (nil), or present but empty.
private struct NilSite: Entity, Equatable {
    var id: Int64
    var name: String
    var homepage: String?
    static let entityName = "NilSite"
    static let tableName = "nil_sites"
    static let isResident = true
}

/// A page that is not resident: the main context holds only what was fetched.
private struct NilPage: Entity, Equatable {
    var id: Int64
    var homepage: String?
    static let entityName = "NilPage"
    static let tableName = "nil_pages"
}

/// Ids 1…12: every third without a homepage, id 2 with an empty one (a value, not nil).
private let sites = (1...12).map { (index: Int) -> NilSite in
    let homepage: String?
    if index % 3 == 0 {
        homepage = nil
    } else if index == 2 {
        homepage = ""
    } else {
        homepage = "https://example.com/\(index)"
    }
    return NilSite(id: Int64(index), name: "site \(index)", homepage: homepage)
}
private let withoutHomepage: [Int64] = [3, 6, 9, 12]
private let withHomepage: [Int64] = [1, 2, 4, 5, 7, 8, 10, 11]

/// `Attribute(…) == nil` and `!= nil` are `IS NULL` and `IS NOT NULL`, the same in SQL and in
/// memory.
@MainActor
@Suite struct NilComparisonTests {
    @Test func comparingWithTheNilLiteralBuildsTheNullFilters() throws {
        let isNil = Attribute("homepage") == nil      // a Filter, not Optional's Bool comparison
        let isNotNil = Attribute("homepage") != nil
        #expect(isNil == Attribute("homepage").isNull)
        #expect(isNotNil == Attribute("homepage").isNotNull)
        #expect(isNil == (Attribute("homepage") == String?.none))
        #expect(isNil.description == "homepage IS NULL")
        #expect(isNotNil.description == "NOT homepage IS NULL")

        let schema = try SchemaRegistry([NilSite.self]).schema(for: NilSite.self)
        let (sql, arguments) = try ResolvedFilter(isNil, schema: schema).sql()
        #expect(sql == "\"homepage\" IS NULL")
        #expect(arguments.isEmpty)
        let (notSQL, notArguments) = try ResolvedFilter(isNotNil, schema: schema).sql()
        #expect(notSQL == "NOT (\"homepage\" IS NULL)")
        #expect(notArguments.isEmpty)
    }

    @Test func equalNilMatchesExactlyTheNilOnesInSQLAndInMemory() async throws {
        let directory = try TemporaryDirectory()
        let log = StatementLog()
        let store = try await openStore(directory.path("nil.sqlite"), entities: [NilSite.self], log: log)
        var changes = ChangeSet()
        sites.forEach { changes.insert($0) }
        try await store.submit(changes).committed()

        let isNil = Query<NilSite>(where: Attribute("homepage") == nil, sortedBy: [Attribute("id").ascending])
        let isNotNil = Query<NilSite>(where: Attribute("homepage") != nil, sortedBy: [Attribute("id").ascending])
        // SQL.
        #expect(try await store.fetch(isNil).map(\.id) == withoutHomepage)
        #expect(try await store.fetch(isNotNil).map(\.id) == withHomepage)
        #expect(try await store.count(isNil) == withoutHomepage.count)

        // In memory: the resident entity loaded once, then read with no SQL at all.
        let main = store.mainContext
        try await main.loadResidentEntities()
        log.clear()
        #expect(try main.objects(matching: isNil).map(\.id) == withoutHomepage)
        #expect(try main.objects(matching: isNotNil).map(\.id) == withHomepage)
        #expect(try main.count(matching: isNil) == withoutHomepage.count)
        #expect(try main.count(matching: isNotNil) == withHomepage.count)
        // Never unknown: the negations are the complements, in memory as in SQL.
        let notNil = Query<NilSite>(where: !(Attribute("homepage") == nil), sortedBy: [Attribute("id").ascending])
        #expect(try main.objects(matching: notNil).map(\.id) == withHomepage)
        #expect(log.count { $0.contains("nil_sites") } == 0, "the main context read from memory: \(log.statements)")
        #expect(try await store.fetch(notNil).map(\.id) == withHomepage)
        try await store.close()
    }

    @Test func aFetchedNonResidentEntityMatchesNilInMemoryAsInSQL() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("pages.sqlite"), entities: [NilPage.self])
        var changes = ChangeSet()
        sites.forEach { changes.insert(NilPage(id: $0.id, homepage: $0.homepage)) }
        try await store.submit(changes).committed()

        let main = store.mainContext
        _ = try await main.fetch(Query<NilPage>())          // every page into memory
        let isNil = Query<NilPage>(where: Attribute("homepage") == nil, sortedBy: [Attribute("id").ascending])
        let isNotNil = Query<NilPage>(where: Attribute("homepage") != nil, sortedBy: [Attribute("id").ascending])
        #expect(try main.objects(matching: isNil).map(\.id) == withoutHomepage)
        #expect(try main.objects(matching: isNotNil).map(\.id) == withHomepage)
        #expect(try await store.fetch(isNil).map(\.id) == withoutHomepage)
        #expect(try await store.fetch(isNotNil).map(\.id) == withHomepage)
        try await store.close()
    }
}
