import Foundation
@testable import Strata
import StrataTestSupport
import Testing

struct CellNote: Entity, Equatable {
    var id: Int64
    var title: String
    static let isResident = true
}

/// Rows go from a statement into column cells without a `String` per value (`CellBatch`, then
/// `ColumnBlock.append(_:)`, from the second batch on a thread of its own: `HandOff`); what they
/// store must be what the value path stores, and a bad row stops the fetch wherever it is.
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
        try await store.close()
    }

    @Test func aFetchOfManyBatchesHoldsEveryRowAsSQLiteHasIt() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [CellNote.self])
        let rows = Store.fetchBatchRows * 4 + 123
        try await store.write { db in
            try db.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows))
                INSERT INTO CellNote (id, title) SELECT i, printf('note %d %s', i, substr('éàü✓xyz', 1 + i % 7)) FROM n
                """)
        }
        let main = store.mainContext
        try await main.loadResidentEntities()
        let loaded = main.objects(CellNote.self).sorted { $0.id < $1.id }
        let read = try await store.read { db in try db.rows("SELECT id, title FROM CellNote ORDER BY id") }
        #expect(loaded.count == rows)
        #expect(loaded.map { DatabaseValue.integer($0.id) } == read.map { $0["id"] })
        #expect(loaded.map { DatabaseValue.text($0.title) } == read.map { $0["title"] })
        // Every key found, in whichever batch it came.
        let title = try #require(read[4099]["title"])
        #expect(try main.ids(matching: Query<CellNote>(where: Attribute("title") == title)) == [4100])
        for id in [1, Int64(Store.fetchBatchRows), Int64(Store.fetchBatchRows) + 1, Int64(rows)] {
            #expect(main.object(CellNote.self, id: id)?.id == id)
        }
        try await store.close()
    }

    @Test func aBadRowAfterSeveralBatchesFailsTheFetchAndTheStoreGoesOn() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [CellNote.self])
        let bad = Store.fetchBatchRows * 3 + 5
        try await store.write { db in
            try db.execute("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(bad + 1000))
                INSERT INTO CellNote (id, title) SELECT i, 'note ' || i FROM n
                """)
            // A blob where the title (a String) is: written by another tool.
            try db.execute("UPDATE CellNote SET title = X'00FF' WHERE id = \(bad)")
        }
        let worker = store.makeWorkerContext()
        await #expect {
            _ = try await worker.fetch(Query<CellNote>())
        } throws: { error in
            let error = try #require(error as? StrataError)
            return error.objectID == "\(bad)" && error.message.contains("title")
        }
        // The store's queue is not held by the stopped fetch: it reads, writes and fetches again.
        try await store.write { db in try db.execute("UPDATE CellNote SET title = 'mended' WHERE id = \(bad)") }
        let fetched = try await worker.fetch(Query<CellNote>())
        #expect(fetched.count == bad + 1000)
        #expect(fetched.first { $0.id == Int64(bad) }?.title == "mended")
    }
}
