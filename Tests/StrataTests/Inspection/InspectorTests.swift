import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// An entity with a renamed key column, an optional attribute, an index and full text — what the
/// inspector must describe from the store's records alone.
private struct InspectedArticle: Entity, Equatable {
    var id: String
    var feedID: Int64
    var title: String
    var summary: String?
    var published: Date
    var isRead: Bool

    static let tableName = "inspected_articles"
    static let columnNames = ["id": "uniqueID"]
    static let indexes = [EntityIndex(["feedID", "isRead"])]
    static let fullTextAttributes = ["title", "summary"]
    static let isResident = true

    static func make(_ index: Int) -> InspectedArticle {
        InspectedArticle(id: "a-\(index)", feedID: Int64(index % 4), title: index % 5 == 0 ? "Swift on Linux \(index)" : "Notes \(index)",
                         summary: index % 3 == 0 ? nil : "summary \(index)",
                         published: Date(timeIntervalSinceReferenceDate: Double(index) * 60), isRead: index % 2 == 0)
    }
}

private struct InspectedFeed: Entity, Equatable {
    var id: Int64
    var name: String
    static let isResident = true
}

/// The bytes and modification date of a file, to prove it was not written.
private func fingerprint(_ path: String) throws -> (Data, Date?) {
    (try Data(contentsOf: URL(fileURLWithPath: path)),
     try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
}

@MainActor
@Suite struct InspectorTests {
    static let entities: [any Entity.Type] = [InspectedArticle.self, InspectedFeed.self]

    /// A store with 30 articles and 3 feeds, inserted in one change set (33 logged changes).
    private func seed(_ path: String) async throws -> Store {
        let store = try await Store.open(at: path, entities: Self.entities)
        var changes = ChangeSet()
        for index in 0..<30 { changes.insert(InspectedArticle.make(index)) }
        for index in 0..<3 { changes.insert(InspectedFeed(id: Int64(index), name: "feed \(index)")) }
        try store.submit(changes)
        try await store.persist()
        return store
    }

    private func expectCode(_ code: StrataError.Code, _ body: () throws -> Void) {
        do {
            try body()
            Issue.record("expected \(code), nothing was thrown")
        } catch let error as StrataError {
            #expect(error.code == code, "\(error)")
        } catch {
            Issue.record("expected \(code), got \(error)")
        }
    }

    @Test func summaryDescribesTheStoreFromItsRecordsAlone() async throws {
        let scratch = try TemporaryDirectory()
        let db = scratch.path("s.sqlite")
        let store = try await seed(db)
        let token = try await store.currentChangeToken()

        let inspector = try StoreInspector(path: db)
        #expect(inspector.storeID == store.storeID)
        #expect(inspector.schemaVersion == 1)
        #expect(inspector.format == StoreInspector.readableFormat)
        // The recorded schemas equal the ones the app registered (defaults included).
        #expect(try inspector.entity(named: "InspectedArticle") == store.schema(of: InspectedArticle.self))
        #expect(try inspector.entity(named: "InspectedFeed") == store.schema(of: InspectedFeed.self))
        #expect(try inspector.entity(named: "INSPECTED_ARTICLES").name == "InspectedArticle")

        let summary = try inspector.summary()
        #expect(summary.entities.map(\.schema.name) == ["InspectedArticle", "InspectedFeed"])
        #expect(summary.entities.map(\.rowCount) == [30, 3])
        #expect(summary.entities[0].fullTextTable == "inspected_articles_fts")
        #expect(summary.entities[1].fullTextTable == nil)
        let indexes = summary.entities[0].indexes
        #expect(indexes.contains(IndexSummary(name: "inspected_articles_feedID_isRead", table: "inspected_articles",
                                              columns: ["feedID", "isRead"], isUnique: false, origin: .declared)))
        #expect(indexes.contains { $0.origin == .primaryKey && $0.columns == ["uniqueID"] && $0.isUnique })
        // One change set of 30 articles then 3 feeds: the writer logs one entry per run.
        #expect(summary.changeLog == ChangeLogRange(floor: 0, oldest: 1, newest: 2, entries: 2))
        #expect(summary.changeLog.generation == token.generation)
        #expect(summary.files.database > 0)
        #expect(summary.files.pageSize > 0 && summary.files.pageCount > 0)
    }

    @Test func untypedQueriesAgreeWithTypedFetches() async throws {
        let scratch = try TemporaryDirectory()
        let db = scratch.path("s.sqlite")
        let store = try await seed(db)
        let inspector = try StoreInspector(path: db)
        let filters: [Filter] = [
            .all,
            Attribute("isRead") == false && Attribute("feedID").in([1, 3]),
            Attribute("summary").isNull || Attribute("title").hasPrefix("Swift"),
            .matches("linux"),
            !(Attribute("published") > Date(timeIntervalSinceReferenceDate: 600)),
        ]
        for filter in filters {
            let sort = [Attribute("feedID").descending, Attribute("published").ascending]
            let typed = try await store.fetch(Query<InspectedArticle>(where: filter, sortedBy: sort, limit: 7, offset: 2))
            let rows = try inspector.rows(InspectionQuery(entity: "InspectedArticle", where: filter, sortedBy: sort, limit: 7, offset: 2))
            #expect(rows.map { $0["id"] } == typed.map { .text($0.id) }, "\(filter)")
            #expect(rows.first?.columns == ["id", "feedID", "title", "summary", "published", "isRead"])
            let all = try await store.count(Query<InspectedArticle>(where: filter))
            #expect(try inspector.count(InspectionQuery(entity: "InspectedArticle", where: filter)) == all)
        }
        let plan = try inspector.explain(InspectionQuery(entity: "InspectedArticle",
                                                         where: Attribute("feedID") == 1 && Attribute("isRead") == false))
        #expect(plan.contains { $0.detail.contains("inspected_articles_feedID_isRead") }, "\(plan)")

        expectCode(.unknownEntity) { _ = try inspector.rows(InspectionQuery(entity: "Nope")) }
        expectCode(.unknownAttribute) { _ = try inspector.rows(InspectionQuery(entity: "InspectedArticle", where: Attribute("nope") == 1)) }
        expectCode(.unknownAttribute) { _ = try inspector.rows(InspectionQuery(entity: "InspectedFeed", where: .matches("x"))) }
        expectCode(.invalidValue) { _ = try inspector.rows(InspectionQuery(entity: "InspectedArticle", where: Attribute("title") == 3)) }
        expectCode(.unknownAttribute) {
            _ = try inspector.rows(InspectionQuery(entity: "InspectedArticle", sortedBy: [Attribute("nope").ascending]))
        }
    }

    @Test func readingNeverWritesTheFile() async throws {
        let scratch = try TemporaryDirectory()
        let built = scratch.path("built.sqlite"), file = scratch.path("s.snapshot")
        do {
            let store = try await seed(built)
            let main = store.mainContext
            try await main.loadResidentEntities()
            try await main.writeSnapshot(to: file)
            try await store.close()   // checkpoints the WAL into the database file
        }
        // A copy no connection has open: only the inspector can touch it.
        let db = scratch.path("s.sqlite")
        try FileManager.default.copyItem(atPath: built, toPath: db)
        let before = try fingerprint(db)
        let snapshotBefore = try fingerprint(file)
        let inspector = try StoreInspector(path: db)
        _ = try inspector.summary()
        _ = try inspector.rows(InspectionQuery(entity: "InspectedArticle", where: .matches("swift")))
        #expect(try inspector.check(snapshot: file).passed)
        _ = try Snapshot.verify(at: file, schemas: inspector.entities)
        let after = try fingerprint(db)
        #expect(after.0 == before.0)
        #expect(after.1 == before.1)
        #expect(try fingerprint(file) == snapshotBefore)
    }

    @Test func badFilesAreRefusedWithTheirKind() async throws {
        let scratch = try TemporaryDirectory()
        expectCode(.cannotOpen) { _ = try StoreInspector(path: scratch.path("missing.sqlite")) }
        expectCode(.cannotOpen) { _ = try StoreInspector(path: scratch.url.path) }
        let garbage = scratch.path("garbage.sqlite")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }).write(to: URL(fileURLWithPath: garbage))
        expectCode(.notADatabase) { _ = try StoreInspector(path: garbage) }
        #expect(!FileManager.default.fileExists(atPath: scratch.path("missing.sqlite")), "opening must not create the file")

        // An empty file is an SQLite database — but not a Strata store.
        let empty = scratch.path("empty.sqlite")
        try Data().write(to: URL(fileURLWithPath: empty))
        expectCode(.notADatabase) { _ = try StoreInspector(path: empty) }

        // Bookkeeping from a newer Strata: a higher format, a schema with an unknown attribute type.
        let newer = scratch.path("newer.sqlite")
        let store = try await seed(newer)
        try await store.write { db in
            try db.execute("UPDATE strata_meta SET value = \(StoreInspector.readableFormat + 1) WHERE key = 'format'")
        }
        expectCode(.newerSchema) { _ = try StoreInspector(path: newer) }
        try await store.write { db in
            try db.execute("UPDATE strata_meta SET value = \(StoreInspector.readableFormat) WHERE key = 'format'")
            try db.execute("UPDATE strata_entities SET schema = replace(schema, '\"type\":\"bool\"', '\"type\":\"vector\"') "
                           + "WHERE name = 'InspectedArticle'")
        }
        expectCode(.newerSchema) { _ = try StoreInspector(path: newer) }
        try await store.write { db in try db.execute("UPDATE strata_entities SET schema = '{oops' WHERE name = 'InspectedArticle'") }
        expectCode(.corrupt) { _ = try StoreInspector(path: newer) }
    }

    @Test func checkFindsBrokenChangeLogsAndTables() async throws {
        let scratch = try TemporaryDirectory()
        let db = scratch.path("s.sqlite")
        let store = try await seed(db)
        let healthy = try StoreInspector(path: db).check()
        #expect(healthy.passed, "\(healthy)")
        #expect(healthy.items.map(\.name) == ["integrity", "foreign keys", "change log", "history", "entity tables", "stored values"])

        func problems(_ name: String) throws -> [String] {
            try StoreInspector(path: db).check().items.first { $0.name == name }?.problems ?? []
        }
        // Raw SQL is logged row by row by the triggers: generations 3 to 32.
        try await store.write { db in try db.execute("UPDATE inspected_articles SET title = title || '!'") }
        #expect(try problems("change log").isEmpty)
        try await store.write { db in try db.execute("DELETE FROM strata_changes WHERE generation IN (7, 8)") }
        let gap = try problems("change log")
        #expect(gap == ["2 generations are missing between 1 and 32 (the first is 7)"])

        try await store.write { db in
            try db.execute("INSERT INTO strata_changes (generation, entity, key, op) VALUES (7, 99, 'x', 1), (8, 1, 'y', 9)")
        }
        #expect(try problems("change log") == ["entries name entity code 99, which strata_entities does not record",
                                               "1 entry has an unknown operation code"])

        try await store.write { db in
            try db.execute("DELETE FROM strata_changes WHERE generation IN (7, 8)")
            try db.execute("INSERT INTO strata_changes (generation, entity, key, op) VALUES (7, 1, 'x', 1), (8, 1, 'y', 1)")
            try db.execute("INSERT INTO strata_meta (key, value) VALUES ('log_floor', 3)")
        }
        #expect(try problems("change log") == ["3 entries at or below the floor 3 were not pruned"])

        try await store.write { db in
            try db.execute("DELETE FROM strata_meta WHERE key = 'log_floor'")
            try db.execute("DROP TRIGGER strata_log_InspectedFeed_update")
            try db.execute("DROP INDEX inspected_articles_feedID_isRead")
        }
        #expect(try problems("entity tables") == [
            "InspectedArticle: index inspected_articles_feedID_isRead is missing",
            "InspectedFeed: change-log trigger strata_log_InspectedFeed_update is missing (changes go unlogged)",
        ])
        #expect(try problems("change log").isEmpty)
    }

    @Test func checkCountsStoredValuesOutsideTheirAttributesAndColumnsNobodyReads() async throws {
        let scratch = try TemporaryDirectory()
        let db = scratch.path("values.sqlite")
        let store = try await seed(db)
        let healthy = try StoreInspector(path: db).check().items.first { $0.name == "stored values" }
        #expect(healthy?.problems == [])
        #expect(healthy?.detail == "\(30 * 6 + 3 * 2) values fit their attributes' types")

        // Values a fetch would fail on, written from outside: a word in an integer, a blob in a
        // string, NULL in a non-optional attribute; and a column no attribute reads.
        try await store.write { db in
            try db.execute("UPDATE inspected_articles SET feedID = 'seven' WHERE uniqueID IN ('a-1', 'a-2')")
            try db.execute("UPDATE inspected_articles SET title = x'00ff' WHERE uniqueID = 'a-3'")
            try db.execute("ALTER TABLE inspected_articles ADD COLUMN leftover TEXT")
            try db.execute("UPDATE inspected_articles SET leftover = 'out of reach' WHERE uniqueID = 'a-4'")
            try db.execute("CREATE TABLE scratch_copy AS SELECT * FROM InspectedFeed")
            try db.execute("DROP TABLE InspectedFeed")
            try db.execute("CREATE TABLE InspectedFeed (id INTEGER PRIMARY KEY, name TEXT)")
            try db.execute("INSERT INTO InspectedFeed SELECT id, CASE id WHEN 1 THEN NULL ELSE name END FROM scratch_copy")
        }
        let report = try StoreInspector(path: db).check()
        #expect(report.items.first { $0.name == "stored values" }?.problems == [
            "InspectedArticle.feedID: 2 of 30 values cannot be read as integer",
            "InspectedArticle.title: 1 of 30 values cannot be read as text",
            "InspectedFeed.name: 1 of 3 values are NULL, but the attribute is not optional",
        ])
        #expect(report.items.first { $0.name == "entity tables" }?.problems
                    .contains("InspectedArticle: column leftover holds 1 values that no recorded attribute reads") == true)
        #expect(!report.passed)
    }

    /// The inspector judges a snapshot exactly as a warm start does.
    @Test func snapshotValidityAgreesWithWarmStart() async throws {
        let scratch = try TemporaryDirectory()
        let db = scratch.path("s.sqlite"), file = scratch.path("s.snapshot")
        let otherDB = scratch.path("other.sqlite"), otherFile = scratch.path("other.snapshot")
        do {
            for (path, snapshot) in [(db, file), (otherDB, otherFile)] {
                let store = try await seed(path)
                let main = store.mainContext
                try await main.loadResidentEntities()
                try await main.writeSnapshot(to: snapshot)
                try await store.close()
            }
        }
        func judge(_ snapshot: String) async throws -> (SnapshotValidity, SnapshotOutcome) {
            let validity = try StoreInspector(path: db).snapshotValidity(at: snapshot)
            let warm = try await Store.openWarm(at: db, snapshot: snapshot, entities: Self.entities)
            try await warm.store.close()
            return (validity, warm.outcome)
        }
        let (current, used) = try await judge(file)
        #expect(current == .current)
        #expect(used == .used)

        let (foreign, rejected) = try await judge(otherFile)
        #expect(foreign.rejection == .otherStore)
        #expect(rejected.rejection == .otherStore)

        let corrupt = scratch.path("corrupt.snapshot")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        bytes[bytes.count - 10] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: corrupt))
        let (damaged, damagedOutcome) = try await judge(corrupt)
        #expect(damaged.rejection == .checksumMismatch)
        #expect(damagedOutcome.rejection == .checksumMismatch)

        let truncated = scratch.path("truncated.snapshot")
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: truncated))
        #expect(try StoreInspector(path: db).snapshotValidity(at: truncated).rejection == .truncated)
        #expect(try StoreInspector(path: db).snapshotValidity(at: scratch.path("none")).rejection == .missing)

        // The database moves ahead: still valid, with the changes to catch up.
        do {
            let store = try await Store.open(at: db, entities: Self.entities)
            var changes = ChangeSet()
            changes.update(InspectedArticle.make(4))
            changes.insert(InspectedFeed(id: 9, name: "late"))
            try store.submit(changes)
            try await store.close()
        }
        let (behind, caughtUp) = try await judge(file)
        #expect(behind == .behind(changes: 2))
        #expect(caughtUp == .caughtUp(changes: 2))

        // A store opened with another schema: the snapshot no longer fits.
        do {
            let store = try await Store.open(at: db, entities: [InspectedArticle.self])
            try await store.write { db in
                try db.execute("UPDATE strata_entities SET schema = replace(schema, '\"isResident\":true', '\"isResident\":false') "
                               + "WHERE name = 'InspectedFeed'")
            }
            try await store.close()
        }
        #expect(try StoreInspector(path: db).snapshotValidity(at: file).rejection == .schemaChanged)
    }

    @Test func vacuumGivesBackFreedPages() async throws {
        let scratch = try TemporaryDirectory()
        let db = scratch.path("s.sqlite")
        do {
            let store = try await Store.open(at: db, entities: Self.entities)
            var changes = ChangeSet()
            for index in 0..<3_000 { changes.insert(InspectedArticle.make(index)) }
            try store.submit(changes)
            try await store.persist()
            try store.deleteAll(InspectedArticle.self, where: .all)
            try await store.close()
        }
        let before = try StoreInspector(path: db).summary()
        let report = try StoreInspector.vacuum(at: db)
        #expect(report.pagesBefore == before.files.pageCount)
        #expect(report.pagesAfter < report.pagesBefore)
        #expect(report.bytesReclaimed > 0)
        let after = try StoreInspector(path: db)
        #expect(try after.check().passed)
        #expect(try after.summary().entities.map(\.rowCount) == [0, 0])
        #expect(report.bytesAfter == (try after.fileSizes().database) + (try after.fileSizes().wal ?? 0))
        expectCode(.cannotOpen) { _ = try StoreInspector.vacuum(at: scratch.path("missing.sqlite")) }
        #expect(!FileManager.default.fileExists(atPath: scratch.path("missing.sqlite")))
    }
}
