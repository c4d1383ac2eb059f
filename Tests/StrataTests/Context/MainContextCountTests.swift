import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `MainContext.count(matching:)` counts without building values, from an index when one answers
/// alone; whichever way it goes, it equals the number of objects the same query returns.
@MainActor
@Suite struct MainContextCountTests {
    @Test func countEqualsTheObjectsReturnedForRandomQueriesAndEdits() async throws {
        var (random, seed) = SeededRandom.forTest(#function)
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [Note.self])
        var changes = ChangeSet()
        for id in 0..<300 {
            changes.insert(Note(id: Int64(id), group: Int(random.next() % 4), score: Double(random.next() % 100),
                                label: random.next() % 3 == 0 ? nil : "l\(random.next() % 5)", isDone: random.next() % 2 == 0))
        }
        try await store.submit(changes).committed()
        let main = store.mainContext
        try await main.loadResidentEntities()

        let filters: [Filter] = [
            Attribute("group") == 2,                                      // an index prefix: the index answers
            Attribute("group") == 1 && Attribute("isDone") == false,      // the whole index
            Attribute("isDone") == true && Attribute("group") == 3,       // the same, other order
            Attribute("group") == 2.5,                                    // matches nothing
            Attribute("group") == 2 && Attribute("group") == 3,           // contradiction: evaluated
            Attribute("isDone") == true,                                  // not a prefix: evaluated
            Attribute("group") == 1 && Attribute("score") > 50,           // more than equalities
            Attribute("label") == "l1",
            Attribute("id").in([1, 2, 3, 400]),
            .all,
        ]
        for round in 0..<6 {
            if round >= 3 {
                // Unsaved edits take part: an update, an insert and a delete.
                if var note = main.object(Note.self, id: Int64(round)) {
                    note.group = (note.group + 1) % 4
                    try main.update(note)
                }
                try main.insert(Note(id: Int64(1_000 + round), group: 1, score: 1, label: nil, isDone: false))
                try main.delete(Note.self, id: Int64(10 + round))
            }
            for filter in filters {
                for (limit, offset) in [(nil, 0), (5, 0), (5, 2), (nil, 290), (0, 0)] as [(Int?, Int)] {
                    let query = Query<Note>(where: filter, sortedBy: [Attribute("score").descending], limit: limit, offset: offset)
                    let objects = try main.objects(matching: query)
                    #expect(try main.count(matching: query) == objects.count,
                            "seed \(seed), round \(round), \(filter), limit \(String(describing: limit)), offset \(offset)")
                    #expect(try main.ids(matching: query) == objects.map(\.id),
                            "seed \(seed), round \(round), \(filter), limit \(String(describing: limit)), offset \(offset): IDs")
                    let results = try main.results(matching: query)
                    #expect(results.ids == objects.map(\.id) && Array(results) == objects,
                            "seed \(seed), round \(round), \(filter), limit \(String(describing: limit)), offset \(offset): results")
                }
            }
        }
    }

    @Test func anIndexPrefixIsCountedByTheIndex() throws {
        let schema = try SchemaRegistry([Note.self]).schema(for: Note.self)
        var index = InMemoryIndex<Int64>(positions: [1, 4], schema: schema)   // group, isDone
        for id in 0..<10 {
            var row = [DatabaseValue](repeating: .null, count: schema.attributes.count)
            row[1] = .integer(Int64(id % 2))
            row[4] = .integer(id < 3 ? 1 : 0)
            index.insert(Int64(id), row: row)
        }
        #expect(index.count(exactly: [1: .integer(0)]) == 5)
        #expect(index.count(exactly: [1: .integer(0), 4: .integer(1)]) == 2)
        #expect(index.count(exactly: [1: .real(0)]) == 5, "numbers are normalized to the attribute's class")
        #expect(index.count(exactly: [4: .integer(1)]) == nil, "not a prefix: the index cannot answer alone")
        #expect(index.count(exactly: [1: .null]) == 0, "NULL equals nothing")
    }
    /// An index built over a block lists its postings in arrays (`insertListed`) and turns them
    /// into sets at the first change: after random insertions and removals it answers exactly as
    /// one built object by object.
    @Test func anIndexBuiltOverABlockChangesLikeOneBuiltObjectByObject() throws {
        let seed = SeededRandom.seed(for: "anIndexBuiltOverABlockChangesLikeOneBuiltObjectByObject")
        var random = SeededRandom(seed: seed)
        let schema = try SchemaRegistry([Note.self]).schema(for: Note.self)
        var listed = InMemoryIndex<Int64>(positions: [1, 4], schema: schema)   // group, isDone
        var inserted = listed
        var rows: [Int64: [DatabaseValue]] = [:]
        func row() -> [DatabaseValue] {
            var row = [DatabaseValue](repeating: .null, count: schema.attributes.count)
            row[1] = .integer(Int64(random.next(3)))
            row[4] = .integer(Int64(random.next(2)))
            return row
        }
        for id in 0..<Int64(200) {
            rows[id] = row()
            listed.insertListed(id, row: rows[id]!)
            inserted.insert(id, row: rows[id]!)
        }
        for step in 0..<400 {
            let id = Int64(random.next(260))
            if let old = rows[id], random.next(2) == 0 {
                listed.remove(id, row: old)
                inserted.remove(id, row: old)
                rows[id] = nil
            } else if rows[id] == nil {
                rows[id] = row()
                listed.insert(id, row: rows[id]!)
                inserted.insert(id, row: rows[id]!)
            }
            for group in 0..<3 {
                for done in 0..<2 {
                    let both: [Int: DatabaseValue] = [1: .integer(Int64(group)), 4: .integer(Int64(done))]
                    let expected = Set(rows.filter { $0.value[1] == .integer(Int64(group)) && $0.value[4] == .integer(Int64(done)) }.keys)
                    #expect(Set(listed.candidates(both) ?? []) == expected, "seed \(seed) step \(step)")
                    #expect(listed.candidates(both)?.count == expected.count, "seed \(seed) step \(step): listed once each")
                    #expect(listed.count(exactly: both) == inserted.count(exactly: both), "seed \(seed) step \(step)")
                    #expect(listed.count(exactly: [1: .integer(Int64(group))]) == inserted.count(exactly: [1: .integer(Int64(group))]))
                }
            }
        }
    }
    /// Comparisons SQLite makes across storage classes: a real key finds the integer key equal to
    /// it, a whole real the integers equal to it. The main context's key lookups and in-memory
    /// indexes must answer as SQL does. (A number against a text attribute is refused as a filter.)
    @Test func equalitiesAcrossStorageClassesAnswerAsSQLDoes() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [Note.self])
        var changes = ChangeSet()
        changes.insert(Note(id: 1, group: 1, score: 2, label: "5", isDone: false))
        changes.insert(Note(id: 2, group: 1, score: 5, label: "b", isDone: false))
        try await store.submit(changes).committed()
        let main = store.mainContext
        try await main.loadResidentEntities()
        let filters: [Filter] = [
            Attribute("id").in([DatabaseValue.real(1.0), .integer(7)]),
            Attribute("id") == 2.0,
            Attribute("group") == 1.0 && Attribute("isDone") == false,
            Attribute("score") == 5,
        ]
        for filter in filters {
            let query = Query<Note>(where: filter)
            let fromSQL = try await store.fetch(query).map(\.id)
            #expect(try main.ids(matching: query) == fromSQL, "\(filter)")
            #expect(try main.count(matching: query) == fromSQL.count, "\(filter): count")
        }
    }
    /// Bulk updates move objects between index keys (the leading attribute, the second, both, or
    /// none of the indexed ones): afterwards every prefix of the index answers as SQL does.
    @Test func bulkUpdatesKeepTheIndexesAnsweringAsSQL() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [Note.self])
        var changes = ChangeSet()
        for id in 0..<Int64(40) { changes.insert(Note(id: id, group: Int(id % 4), score: Double(id), label: nil, isDone: id % 3 == 0)) }
        try await store.submit(changes).committed()
        let main = store.mainContext
        try await main.loadResidentEntities()
        let updates: [(ids: [Int64], values: [String: any DatabaseValueConvertible])] = [
            ([1, 2, 3, 5, 8], ["group": 3]),                     // the leading attribute
            ([0, 3, 6, 9, 12], ["isDone": false]),               // the second one
            ([13, 14, 15], ["group": 0, "isDone": true]),        // both
            ([20, 21], ["score": 99.0]),                         // neither
        ]
        for update in updates {
            try await main.updateAll(Note.self, ids: update.ids, set: update.values).committed()
            for group in 0..<4 {
                for filter in [Attribute("group") == group, Attribute("group") == group && Attribute("isDone") == true,
                               Attribute("group") == group && Attribute("isDone") == false] {
                    let query = Query<Note>(where: filter)
                    let fromSQL = try await store.fetch(query).map(\.id)
                    #expect(try main.ids(matching: query) == fromSQL, "after \(update.values): \(filter)")
                    #expect(try main.count(matching: query) == fromSQL.count, "after \(update.values): \(filter), count")
                }
            }
        }
    }
}
