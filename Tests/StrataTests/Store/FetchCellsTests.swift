import Foundation
@testable import Strata
import StrataTestSupport
import Testing

struct CellNote: Entity, Equatable {
    var id: Int64
    var title: String
    static let isResident = true
}

/// Rows go from a statement into column cells without a `String` per value
/// (`ColumnBlock.append(cells:admitted:)`); what they store must be what the value path stores.
@MainActor
@Suite struct FetchCellsTests {
    @Test func textIsStoredAsTheValuePathStoresIt() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [CellNote.self])
        try await store.write { db in
            // ASCII, non-ASCII, empty, a NUL inside, and bytes that are not UTF-8 (repaired as a String repairs them).
            try db.execute("""
                INSERT INTO CellNote (id, title) VALUES (1, 'plain'), (2, 'café ✓'), (3, ''),
                    (4, 'a' || char(0) || 'b'), (5, CAST(X'61FF62' AS TEXT))
                """)
        }
        let main = store.mainContext
        try await main.loadResidentEntities()
        let loaded = main.objects(CellNote.self)
        #expect(loaded.map(\.title) == ["plain", "café ✓", "", "a\u{0}b", "a\u{FFFD}b"])
        // The same as a value read row by row (`Statement.value(at:)`).
        let read = try await store.read { db in try db.rows("SELECT title FROM CellNote ORDER BY id").map { $0["title"] } }
        #expect(read == loaded.map { DatabaseValue.text($0.title) as DatabaseValue? })
        // In-memory filters compare the stored bytes.
        #expect(try main.ids(matching: Query<CellNote>(where: Attribute("title") == "café ✓")) == [2])
        #expect(try main.ids(matching: Query<CellNote>(where: Attribute("title") == "a\u{FFFD}b")) == [5])
        // The cells hold the repaired bytes, as a row encoded from the value would: comparing
        // cells (how merges find what changed) agrees with comparing values.
        let table = try main.graph.table(CellNote.self)
        let slot = try #require(table.saved.slot(of: .integer(5)))
        let title = try table.schema.requirePosition(of: "title")
        #expect(table.saved.cellEquals(.text("a\u{FFFD}b"), at: slot, title))
    }
}
