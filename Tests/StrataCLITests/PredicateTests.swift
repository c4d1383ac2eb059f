import Foundation
import Strata
@testable import StrataCLICore
import StrataTestSupport
import Testing

/// The `--where` syntax parses into the library's `Filter`, checked against the entity's schema.
@MainActor
@Suite struct PredicateTests {
    private func filter(_ text: String, _ fixture: ReaderFixture) throws -> Filter {
        let schema = try StoreInspector(path: fixture.store).entity(named: "Article")
        return try PredicateBinder(schema: schema).bind(try PredicateParser.parse(text))
    }

    @Test func syntaxMapsOntoFilters() async throws {
        let fixture = try await ReaderFixture()
        let may = Date(timeIntervalSince1970: 1_714_521_600)  // 2024-05-01T00:00:00Z
        let cases: [(String, Filter)] = [
            ("isRead = false", Attribute("isRead") == false),
            ("isRead == 0 or feedID <> 3",
             .any([Attribute("isRead") == 0, Attribute("feedID") != 3])),
            ("feedID IN (1, 2,3) AND NOT isStarred", .all([Attribute("feedID").in([1, 2, 3]), !(Attribute("isStarred") == true)])),
            ("feedID not in (1)", !Attribute("feedID").in([1])),
            ("summary IS NULL OR summary is not null", .any([Attribute("summary").isNull, Attribute("summary").isNotNull])),
            ("summary = null", Attribute("summary").isNull),
            ("title BEGINSWITH 'How' AND title CONTAINS 'it''s'", .all([Attribute("title").hasPrefix("How"),
                                                                        Attribute("title").contains("it's")])),
            ("MATCH \"swift concurr*\"", .matches("swift concurr*")),
            ("published >= '2024-05-01'", Attribute("published") >= may),
            ("published < '2024-05-01T00:00:00Z'", Attribute("published") < may),
            ("published < '2024-05-01T02:00:00+02:00'", Attribute("published") < may),
            ("published < '2024-04-30T21:30:00-02:30'", Attribute("published") < may),
            ("published >= '2024-02-29T23:59:59.5Z'", Attribute("published") >= Date(timeIntervalSince1970: 1_709_251_199.5)),
            ("published >= '1999-12-31'", Attribute("published") >= Date(timeIntervalSince1970: 946_598_400)),
            ("feedID > -1.5 AND feedID <= 2", .all([Attribute("feedID") > -1.5, Attribute("feedID") <= 2])),
            ("(isRead OR isStarred) AND (feedID = 1 OR TRUE)",
             .all([.any([Attribute("isRead") == true, Attribute("isStarred") == true]), .any([Attribute("feedID") == 1, .all])])),
            ("NOT NOT FALSE", !(!Filter.none)),
        ]
        for (text, expected) in cases {
            #expect(try filter(text, fixture) == expected, "\(text)")
        }
    }

    @Test func errorsSayWhatAndWhere() async throws {
        let fixture = try await ReaderFixture()
        let cases: [(String, String)] = [
            ("", "expected an attribute name, found the end of the expression (at column 1)"),
            ("isRead = true true", "unexpected 'true' after a complete expression (at column 15)"),
            ("title = 'open", "unterminated string (at column 9)"),
            ("title = unquoted", "expected a value after '=', found 'unquoted' (quote strings: 'text') (at column 9)"),
            ("feedID = 'one'", "'feedID' is an integer; expected a number, found 'one' (at column 10)"),
            ("feedID < null", "null can only be compared with = or != (IS NULL, IS NOT NULL) (at column 10)"),
            ("feedID BEGINSWITH 'x'", "BEGINSWITH needs a text attribute; 'feedID' is an integer (at column 1)"),
            ("title", "'title' is text, not true/false; compare it with a value (at column 1)"),
            ("published > '2024-13-01'", "'2024-13-01' is not a valid date: month 13 is out of range (01–12) (at column 13)"),
            ("published > '2024-01-10T25:00:00Z'",
             "'2024-01-10T25:00:00Z' is not a valid date: hour 25 is out of range (00–23) (at column 13)"),
            ("published > '2024-02-30'",
             "'2024-02-30' is not a valid date: day 30 is out of range (February 2024 has 29 days) (at column 13)"),
            ("published > '2023-02-29T00:00:00Z'",
             "'2023-02-29T00:00:00Z' is not a valid date: day 29 is out of range (February 2023 has 28 days) (at column 13)"),
            ("published > '2024-04-31'",
             "'2024-04-31' is not a valid date: day 31 is out of range (April 2024 has 30 days) (at column 13)"),
            ("published > '2024-01-10T12:60:00Z'",
             "'2024-01-10T12:60:00Z' is not a valid date: minute 60 is out of range (00–59) (at column 13)"),
            ("published > '2024-01-10T12:00:60Z'",
             "'2024-01-10T12:00:60Z' is not a valid date: second 60 is out of range (00–59) (at column 13)"),
            ("published > '2024-01-10T12:00:00+24:00'",
             "'2024-01-10T12:00:00+24:00' is not a valid date: offset hour 24 is out of range (00–23) (at column 13)"),
            ("published > '2024-01-10T12:00:00'",
             "'2024-01-10T12:00:00' has no time zone: end it with Z (UTC) or an offset such as +02:00 (at column 13)"),
            ("published > '2024-1-10'", "'2024-1-10' is not an ISO 8601 date (2024-05-01 or 2024-05-01T12:00:00Z) (at column 13)"),
            ("published > '2024-01-10 12:00:00Z'",
             "'2024-01-10 12:00:00Z' is not an ISO 8601 date (2024-05-01 or 2024-05-01T12:00:00Z) (at column 13)"),
            ("feedID IS 3", "expected NULL after IS, found '3' (at column 11)"),
            ("feedID NOT 3", "expected IN after NOT, found '3' (at column 12)"),
            ("feedID ~ 3", "unexpected character '~' (at column 8)"),
            ("MATCH swift", "expected a quoted string after MATCH, found 'swift' (at column 7)"),
            ("feedID IN (1 2)", "expected ')' or ',' in the IN list, found '2' (at column 14)"),
        ]
        for (text, message) in cases {
            do {
                _ = try filter(text, fixture)
                Issue.record("\(text) should not parse")
            } catch let error as PredicateSyntaxError {
                #expect(error.description == message, "\(text)")
            }
        }
    }

    /// A parsed filter selects exactly what the same filter selects through the typed library API.
    @Test func parsedFiltersSelectWhatTypedQueriesSelect() async throws {
        let fixture = try await ReaderFixture()
        let store = try await Store.open(at: fixture.store, entities: [Feed.self, Article.self])
        let inspector = try StoreInspector(path: fixture.store)
        let texts = ["isRead = false AND feedID IN (1, 2)", "MATCH 'swift*' OR isStarred", "title CONTAINS 'ing' AND NOT isRead",
                     "published >= '2024-01-01T01:00:00Z' OR feedID = 3", "summary BEGINSWITH 'S'"]
        for text in texts {
            let parsed = try filter(text, fixture)
            let typed = try await store.ids(Query<Article>(where: parsed))
            let rows = try inspector.rows(InspectionQuery(entity: "Article", where: parsed))
            #expect(rows.map { $0["id"] } == typed.map { .text($0) }, "\(text)")
            let result = await runCLI(["query", fixture.store, "Article", "--where", text, "--all", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            let ids = (object?["rows"] as? [[String: Any]])?.compactMap { $0["id"] as? String }
            #expect(ids == typed, "\(text)")
        }
        try await store.close()
    }
}
