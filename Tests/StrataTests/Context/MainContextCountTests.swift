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
        try await store.close()
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
    /// Index keys for the index model tests: numbers in both classes (and both zeros), NULL,
    /// canonically equivalent text, text past sixteen bytes.
    static let indexScores: [DatabaseValue] = [.real(0), .real(-0.0), .integer(0), .integer(1), .real(1), .real(2.5)]
    static let indexLabels: [DatabaseValue] = [.null, .text("a"), .text("\u{E9}"), .text("e\u{301}"),
                                               .text("a long label past sixteen bytes")]

    /// Groups for the index model tests: small integers (a level grouped by a table, no
    /// hashing); integers whose span overflows (hashed); integers far apart (a sparse table
    /// first, hashed beside the label's groups); a real and NULL among integers (hashed), which
    /// a table's cells can hold (not a checked block's), and `1.0` keys as `1` in the integer
    /// attribute.
    nonisolated static let indexGroupPools: [[DatabaseValue]] = [
        [.integer(0), .integer(1), .integer(2)],
        [.integer(.min), .integer(0), .integer(.max)],
        [.integer(-1), .integer(1), .integer(40_000)],
        [.integer(0), .integer(1), .real(1), .null],
    ]

    /// A random `Note` row with key `id`, drawn from those keys and groups.
    static func indexRow(_ id: Int, groups: [DatabaseValue], _ random: inout SeededRandom) -> [DatabaseValue] {
        [.integer(Int64(id)), groups[random.next(groups.count)], indexScores[random.next(indexScores.count)],
         indexLabels[random.next(indexLabels.count)], .integer(Int64(random.next(2)))]
    }

    /// The index model tests' cases: the attributes indexed, and the pool of groups.
    nonisolated static let indexCases: [([Int], Int)] = [([1, 4], 0), ([2], 0), ([3, 1], 0), ([1, 4], 1), ([1, 4], 2), ([3, 1], 2)]

    /// Built over a block of several pages of cells (the dense grouping reads them a page at a
    /// time), an index answers as one built object by object, for every key at every level.
    @Test(arguments: [([1, 4], 0), ([1, 4], 2), ([4], 0)])
    func anIndexBuiltOverABlockOfSeveralPagesAnswersAsOneBuiltObjectByObject(positions: [Int], pool: Int) throws {
        let seed = SeededRandom.seed(for: "anIndexBuiltOverABlockOfSeveralPages \(positions) \(pool)")
        var random = SeededRandom(seed: seed)
        let schema = try SchemaRegistry([Note.self]).schema(for: Note.self)
        var block = ColumnBlock(schema: schema)
        var inserted = InMemoryIndex<Int>(positions: positions, schema: schema)
        for id in 0..<9_500 {
            let row = Self.indexRow(id, groups: Self.indexGroupPools[pool], &random)
            try block.append(row)
            inserted.insert(id, row: row)
        }
        let built = InMemoryIndex<Int>.built(positions: positions, schema: schema, over: block)
        let firsts: [DatabaseValue] = positions[0] == 4 ? [.integer(0), .integer(1)] : Self.indexGroupPools[pool]
        for first in firsts {
            var equalities: [[Int: DatabaseValue]] = [[positions[0]: first]]
            if positions.count > 1 { equalities += [.integer(0), .integer(1)].map { [positions[0]: first, positions[1]: $0] } }
            for equality in equalities {
                let expected = inserted.candidates(equality).map(Set.init)
                #expect(built.candidates(equality).map(Set.init) == expected, "seed \(seed): \(equality)")
                #expect(built.candidates(equality)?.count == expected?.count, "seed \(seed): listed once each")
            }
        }
    }

    /// An index built over a block (grouping key cells by their bytes, postings listed in arrays)
    /// answers as one built object by object — numbers normalized to the attribute's class, NULL
    /// and text keys, several levels — and keeps doing so after random insertions and removals,
    /// which turn its lists into sets.
    @Test(arguments: indexCases)
    func anIndexBuiltOverABlockChangesLikeOneBuiltObjectByObject(positions: [Int], pool: Int) throws {
        let seed = SeededRandom.seed(for: "anIndexBuiltOverABlockChangesLikeOneBuiltObjectByObject \(positions) \(pool)")
        var random = SeededRandom(seed: seed)
        let schema = try SchemaRegistry([Note.self]).schema(for: Note.self)
        let (scores, labels, groups) = (Self.indexScores, Self.indexLabels, Self.indexGroupPools[pool])
        func row(_ id: Int) -> [DatabaseValue] { Self.indexRow(id, groups: groups, &random) }
        var rows: [Int: [DatabaseValue]] = [:]
        var block = ColumnBlock(schema: schema)
        var inserted = InMemoryIndex<Int>(positions: positions, schema: schema)
        for id in 0..<200 {
            rows[id] = row(id)
            try block.append(rows[id]!)
            inserted.insert(id, row: rows[id]!)
        }
        var built = InMemoryIndex<Int>.built(positions: positions, schema: schema, over: block)
        let values: [[DatabaseValue]] = positions.map { position in
            switch position {
            case 2: return scores
            case 3: return labels
            case 1: return groups + [.real(1), .integer(2)]
            default: return [.integer(0), .integer(1), .integer(2), .real(1)]
            }
        }
        func check(_ step: Int) {
            for first in values[0] {
                var equalities: [[Int: DatabaseValue]] = [[positions[0]: first]]
                if positions.count > 1 { equalities += values[1].map { [positions[0]: first, positions[1]: $0] } }
                for equality in equalities {
                    let expected = inserted.candidates(equality).map(Set.init)
                    #expect(built.candidates(equality).map(Set.init) == expected, "seed \(seed) step \(step): \(equality)")
                    #expect(built.candidates(equality)?.count == expected?.count, "seed \(seed) step \(step): listed once each")
                    #expect(built.count(exactly: equality) == inserted.count(exactly: equality), "seed \(seed) step \(step)")
                }
            }
        }
        check(-1)
        for step in 0..<400 {
            let id = random.next(260)
            if let old = rows[id], random.next(2) == 0 {
                built.remove(id, row: old)
                inserted.remove(id, row: old)
                rows[id] = nil
            } else if rows[id] == nil {
                rows[id] = row(id)
                built.insert(id, row: rows[id]!)
                inserted.insert(id, row: rows[id]!)
            }
            if step % 20 == 0 { check(step) }
        }
        check(400)
    }

    /// New rows posted together from a table (grouped by their cells: `insertNew(_:of:)`) or one
    /// by one as new (`insertNew(_:row:)`, which keeps listed postings a list) answer as rows
    /// inserted one by one — with numbers in both classes, NULLs, canonically equivalent text,
    /// several levels — before and after random removals and insertions.
    @Test(arguments: indexCases + [([1, 4], 3), ([3, 1], 3)])
    func newRowsPostedTogetherAnswerLikeRowsInsertedOneByOne(positions: [Int], pool: Int) throws {
        var (random, seed) = SeededRandom.forTest("newRowsPostedTogetherAnswerLikeRowsInsertedOneByOne \(positions) \(pool)")
        let schema = try SchemaRegistry([Note.self]).schema(for: Note.self)
        let (scores, labels, groups) = (Self.indexScores, Self.indexLabels, Self.indexGroupPools[pool])
        func row(_ id: Int) -> [DatabaseValue] { Self.indexRow(id, groups: groups, &random) }
        let table = ColumnTable(schema: schema)
        var one = InMemoryIndex<Int>(positions: positions, schema: schema)
        var together = InMemoryIndex<Int>(positions: positions, schema: schema)
        var rows: [Int: [DatabaseValue]] = [:]   // by slot
        var pending: [Int] = []
        func add(_ id: Int) {
            let new = row(id)
            let slot = table.upsert(new)
            rows[slot] = new
            one.insert(slot, row: new)
            if random.next(5) == 0 { together.insertNew(slot, row: new) } else { pending.append(slot) }
            if random.next(20) == 0 { post() }
        }
        func post() {
            together.insertNew(pending, of: table)
            pending = []
        }
        func check(_ step: Int) {
            for first in [DatabaseValue.integer(0), .integer(1), .integer(2), .real(1)] + scores + labels + groups {
                for second in [nil, DatabaseValue.integer(0), .integer(1), .real(1), .null, .text("a")] {
                    var equality = [positions[0]: first]
                    if positions.count > 1, let second { equality[positions[1]] = second }
                    let expected = one.candidates(equality).map(Set.init)
                    #expect(together.candidates(equality).map(Set.init) == expected, "seed \(seed) step \(step): \(equality)")
                    #expect(together.candidates(equality)?.count == expected?.count, "seed \(seed) step \(step): listed once each")
                    #expect(together.count(exactly: equality) == one.count(exactly: equality), "seed \(seed) step \(step)")
                }
            }
        }
        for id in 0..<150 { add(id) }
        post()
        check(-1)
        for step in 0..<300 {
            let id = 150 + random.next(150)
            if let slot = table.slot(of: .integer(Int64(id))), random.next(2) == 0 {
                post()
                one.remove(slot, row: rows[slot]!)
                together.remove(slot, row: rows[slot]!)
                table.remove(at: slot)
                rows[slot] = nil
            } else if table.slot(of: .integer(Int64(id))) == nil {
                add(id)
            }
            if step % 25 == 0 {
                post()
                check(step)
            }
        }
        post()
        check(300)
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
        try await store.close()
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
        try await store.close()
    }
}
