import Foundation
@testable import Strata
import StrataTestSupport
import Testing

// MARK: - The entity under test

/// Every attribute kind a filter can meet: integers (with values beyond 2^53), doubles (with
/// infinities and integral values), optional text, a flag, a date, an optional integer and a
/// full-text body.
private struct PropertyRow: Entity, Equatable {
    var id: Int64
    var amount: Int64
    var score: Double
    var name: String?
    var flag: Bool
    var stamp: Date
    var rank: Int?
    var body: String

    static let fullTextAttributes = ["body"]
    /// So that the main context's query path answers equalities from its in-memory indexes.
    static let indexes = [EntityIndex(["amount", "flag"]), EntityIndex(["name"])]
}

private let propertyEntities: [any Entity.Type] = [PropertyRow.self]


/// The seed: `STRATA_SEED` to replay a failure, random otherwise (printed).
private func propertySeed() -> UInt64 { SeededRandom.seed(for: "FilterPropertyTests") }

private enum Pools {
    static let bigInteger: Int64 = 1 << 53
    static let integers: [Int64] = [-100, -3, -1, 0, 1, 2, 3, 10, bigInteger - 1, bigInteger, bigInteger + 1,
                                    .max, .max - 1, .min]
    static let doubles: [Double] = [-1e300, -2.5, -1, -0.0, 0, 0.5, 1, 2, 2.5, 3, 9_007_199_254_740_992,
                                    9_007_199_254_740_994, 9.3e18, 9_223_372_036_854_775_808, 1e300, .infinity, -.infinity]
    static let names: [String] = ["", "a", "ab", "abc", "abd", "abcd", "ab c", "b", "B", "Z", "z", "A", "e",
                                  "\u{E9}", "e\u{301}", "a\u{E9}", "\u{E4}", "\u{1F600}", "ab\u{1F600}", "%", "a_b"]
    static let words: [String] = ["alpha", "alphabet", "Alpha", "al", "beta", "BETA", "bet", "gamma", "delta", "omega"]
    static let separators: [String] = [" ", "-", ", ", ".", "  "]
    static let stamps: [Double] = [-86_400, -0.5, 0, 0.5, 1, 60, 86_400, 1e9]
    static let needles: [String] = ["", "a", "ab", "abc", "b c", "A", "al", "alpha", "ph", "e", "\u{E9}", "\u{301}",
                                    "\u{1F600}", "z", "beta", "-", "%", "_", "a b"]
    static let searches: [String] = ["alpha", "alph*", "ALPHA", "alpha beta", "bet*", "beta*", "gamma-delta", "al*",
                                     "omega alpha*", "", "*", "zzz", "b*", "delta gamma", "alphabet"]
    static let attributes = ["id", "amount", "score", "name", "flag", "stamp", "rank", "body"]
}

private struct Random {
    var generator: SeededRandom

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }
    mutating func chance(_ probability: Double) -> Bool { Double.random(in: 0..<1, using: &generator) < probability }
    mutating func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }

    mutating func sentence() -> String {
        (0..<int(0...5)).map { _ in pick(Pools.words) + pick(Pools.separators) }.joined()
    }

    mutating func row(id: Int64) -> PropertyRow {
        PropertyRow(id: id,
                    amount: chance(0.5) ? pick(Pools.integers) : Int64(int(-5...5)),
                    score: chance(0.5) ? pick(Pools.doubles) : Double(int(-6...6)) / 2,
                    name: chance(0.2) ? nil : pick(Pools.names),
                    flag: chance(0.5),
                    stamp: Date(timeIntervalSinceReferenceDate: pick(Pools.stamps)),
                    rank: chance(0.3) ? nil : (chance(0.1) ? Int(Pools.bigInteger + 1) : int(-2...3)),
                    body: sentence())
    }

    /// A value of the storage class the attribute compares with (numbers for numeric attributes,
    /// text for text), occasionally NULL.
    mutating func value(for attribute: String, allowNull: Bool) -> DatabaseValue {
        if allowNull, chance(0.08) { return .null }
        switch attribute {
        case "name", "body":
            return .text(chance(0.7) ? pick(Pools.names) : pick(Pools.words))
        case "flag":
            return pick([.integer(0), .integer(1), .integer(2), .integer(-1), .real(0.5), .real(1)])
        case "stamp":
            return chance(0.7) ? .real(pick(Pools.stamps)) : .integer(Int64(int(-1...86_400)))
        default:
            return chance(0.5) ? .integer(pick(Pools.integers)) : .real(pick(Pools.doubles))
        }
    }

    mutating func filter(depth: Int = 0) -> Filter {
        if depth >= 4 || chance(depth == 0 ? 0.25 : 0.45) { return leaf() }
        switch int(0...5) {
        case 0, 1: return filter(depth: depth + 1) && filter(depth: depth + 1)
        case 2, 3: return filter(depth: depth + 1) || filter(depth: depth + 1)
        case 4: return !filter(depth: depth + 1)
        default:
            let parts = (0..<int(0...3)).map { _ in filter(depth: depth + 1) }
            return chance(0.5) ? .all(parts) : .any(parts)
        }
    }

    mutating func leaf() -> Filter {
        let attribute = Attribute(pick(Pools.attributes))
        let textAttribute = Attribute(pick(["name", "body"]))
        switch int(0...12) {
        case 0...4:
            let value = value(for: attribute.name, allowNull: true)
            switch int(0...5) {
            case 0: return attribute == value
            case 1: return attribute != value
            case 2: return attribute < value
            case 3: return attribute <= value
            case 4: return attribute > value
            default: return attribute >= value
            }
        case 5, 6:
            var values = (0..<int(0...4)).map { _ in value(for: attribute.name, allowNull: false) }
            if chance(0.35) { values.insert(.null, at: int(0...values.count)) }
            return attribute.in(values)
        case 7: return chance(0.5) ? attribute.isNull : attribute.isNotNull
        case 8: return textAttribute.hasPrefix(pick(Pools.needles))
        case 9: return textAttribute.contains(pick(Pools.needles))
        case 10, 11: return .matches(pick(Pools.searches))
        default: return chance(0.5) ? .all : .none
        }
    }

    mutating func query(_ filter: Filter) -> Query<PropertyRow> {
        let keys = (0..<int(0...3)).map { _ in SortKey(pick(Pools.attributes), ascending: chance(0.5)) }
        let limit: Int? = chance(0.4) ? nil : pick([0, 1, 3, 10, 100, -1, Int.max])
        let offset = chance(0.5) ? 0 : pick([1, 5, 50, 1_000, Int(Int32.max)])
        return Query(where: filter, sortedBy: keys, limit: limit, offset: offset)
    }

    /// An assignment a bulk update may make to `attribute`, in a type the attribute accepts.
    mutating func assignment(for attribute: String) -> any DatabaseValueConvertible {
        switch attribute {
        case "amount": return pick(Pools.integers)
        case "score": return chance(0.5) ? pick(Pools.doubles) : Int64(int(-3...3))
        case "name": return chance(0.2) ? String?.none : pick(Pools.names)
        case "flag": return chance(0.5)
        case "stamp": return Date(timeIntervalSinceReferenceDate: pick(Pools.stamps))
        case "rank": return chance(0.3) ? Int?.none : int(-2...3)
        default: return sentence()
        }
    }
}

private func describe(_ query: Query<PropertyRow>) -> String {
    let keys = query.sortKeys.map { "\($0.attribute) \($0.isAscending ? "ASC" : "DESC")" }.joined(separator: ", ")
    return "WHERE \(query.filter) ORDER BY [\(keys)] LIMIT \(query.limit.map(String.init) ?? "none") OFFSET \(query.offset)"
}

// MARK: - Helpers

/// A short account of how two results differ (the full rows would flood the test log).
private func difference(_ actual: [PropertyRow], _ expected: [PropertyRow]) -> String {
    let actualIDs = actual.map(\.id), expectedIDs = expected.map(\.id)
    if actualIDs != expectedIDs {
        let missing = Set(expectedIDs).subtracting(actualIDs).sorted(), extra = Set(actualIDs).subtracting(expectedIDs).sorted()
        return "\(actual.count) rows instead of \(expected.count); missing \(missing.prefix(10)), extra \(extra.prefix(10))"
            + (missing.isEmpty && extra.isEmpty ? ", order differs: \(actualIDs.prefix(10)) vs \(expectedIDs.prefix(10))" : "")
    }
    let differing = zip(actual, expected).filter { $0 != $1 }
    return differing.prefix(3).map { "\($0) instead of \($1)" }.joined(separator: "; ")
}

/// A store of `rows`, and the same rows encoded as the in-memory evaluator sees them.
private func makeStore(_ directory: TemporaryDirectory, _ name: String, rows: [PropertyRow],
                       configure: (inout StoreConfiguration) -> Void = { _ in }) async throws
    -> (Store, EntitySchema, [[DatabaseValue]]) {
    let store = try await openStore(directory.path(name), entities: propertyEntities, configure: configure)
    var changes = ChangeSet()
    rows.forEach { changes.insert($0) }
    try await store.submit(changes).committed()
    let schema = try store.schema(of: PropertyRow.self)
    let encoder = RowEncoder(schema: schema)
    return (store, schema, try rows.map { try encoder.encode($0) })
}

/// The IDs `query` selects from `rows`, evaluated in memory (no SQLite involved).
private func evaluateInMemory(_ query: Query<PropertyRow>, _ schema: EntitySchema, _ rows: [[DatabaseValue]]) throws -> [Int64] {
    try ResolvedQuery(query, schema: schema).evaluate(rows).map { try #require(Int64.fromDatabaseValue($0[schema.primaryKeyIndex])) }
}

@Suite struct FilterPropertyTests {
    // MARK: Property: SQL == in memory

    @Test func sqlAndInMemoryEvaluationAgreeOnRandomDataAndPredicates() async throws {
        let seed = propertySeed()
        var random = Random(generator: SeededRandom(seed: seed))
        let directory = try TemporaryDirectory()
        var compared = 0
        var nonEmpty = 0
        for dataset in 0..<2 {
            var ids = Array(Int64(-400)...400)
            ids.shuffle(using: &random.generator)
            let rows = ids.prefix(300).map { random.row(id: $0) }
            let (store, schema, encoded) = try await makeStore(directory, "dataset-\(dataset).sqlite", rows: rows)
            #expect(try await store.count(Query<PropertyRow>()) == rows.count)
            // The main context's own query path (in-memory indexes, a bounded sort for a window).
            let main = await store.mainContext
            #expect(try await main.fetch(Query<PropertyRow>()).count == rows.count)
            for index in 0..<175 {
                let query = random.query(random.filter())
                let context = "seed \(seed) (rerun with STRATA_SEED=\(seed)), dataset \(dataset), query \(index): \(describe(query))"
                let fromSQL = try await store.fetch(query)
                let inMemory = try evaluateInMemory(query, schema, encoded)
                #expect(fromSQL.map(\.id) == inMemory, "\(context)")
                let inContext = try await main.ids(matching: query)
                #expect(inContext == inMemory, "\(context): main context \(inContext)")
                #expect(try await store.count(query) == inMemory.count, "\(context)")
                compared += 1
                if !inMemory.isEmpty { nonEmpty += 1 }
                if fromSQL.map(\.id) != inMemory {  // one reproducible failure is enough
                    try await store.close()
                    return
                }
            }
            // Decoding gives back exactly what was stored.
            let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.id, $0) })
            let all = try await store.fetch(Query<PropertyRow>())
            #expect(all.count == rows.count)
            #expect(all.allSatisfy { byID[$0.id] == $0 }, "seed \(seed)")
            try await store.close()
        }
        #expect(compared == 350)
        // The predicates must select something often enough for the comparison to mean anything.
        #expect(nonEmpty > compared / 4, "seed \(seed): only \(nonEmpty) of \(compared) queries matched any row")
    }

    // MARK: Property: overlay (pending) == SQL (committed)

    @Test func pendingOverlayAgreesWithCommittedSQLUnderRandomChangeSets() async throws {
        let seed = propertySeed()
        var random = Random(generator: SeededRandom(seed: seed))
        let directory = try TemporaryDirectory()
        let initial = (1...150).map { random.row(id: Int64($0)) }
        // `pending` never commits while the lock is held: its fetches go through the overlay.
        let (pending, _, _) = try await makeStore(directory, "pending.sqlite", rows: initial) { configuration in
            configuration.busyTimeout = 0
            configuration.initialRetryDelay = 0.05
            configuration.maximumRetryDelay = 0.2
        }
        let (reference, _, _) = try await makeStore(directory, "reference.sqlite", rows: initial)
        let other = try await openStore(directory.path("pending.sqlite"), entities: propertyEntities)
        let holder = QueueGate()
        let lock = Task { try await other.write { _ in holder.hold() } }
        defer { holder.release() }
        try #require(await waitOff(holder.entered))

        var nextID: Int64 = 1_000
        var compared = 0
        for round in 0..<8 {
            let existing = Array(try await reference.allIDs(PropertyRow.self)).sorted()
            var changes = ChangeSet()
            // Only operations that succeed: an overlay shows pending saves as if they will.
            for _ in 0..<random.int(0...3) where !existing.isEmpty {
                changes.update(random.row(id: random.pick(existing)))
            }
            for _ in 0..<random.int(0...4) {
                changes.insert(random.row(id: nextID))
                nextID += 1
            }
            for _ in 0..<random.int(0...2) {
                let id = random.chance(0.5) && !existing.isEmpty ? random.pick(existing) : nextID
                if id == nextID { nextID += 1 }
                changes.upsert(random.row(id: id))
            }
            for _ in 0..<random.int(0...2) where !existing.isEmpty {
                changes.delete(PropertyRow.self, id: random.chance(0.8) ? random.pick(existing) : -9_999)
            }
            let assigned = Set((0..<random.int(1...2)).map { _ in random.pick(["amount", "score", "name", "flag", "stamp", "rank", "body"]) })
            var values: [String: any DatabaseValueConvertible] = [:]
            for attribute in assigned { values[attribute] = random.assignment(for: attribute) }
            let someIDs = (0..<random.int(0...20)).map { _ in existing.isEmpty || random.chance(0.1) ? -1 : random.pick(existing) }
            switch random.int(0...5) {
            case 0, 1: changes.updateAll(PropertyRow.self, where: random.filter(depth: 1), set: values)
            case 2: changes.updateAll(PropertyRow.self, ids: someIDs, set: values)
            case 3: changes.deleteAll(PropertyRow.self, where: random.filter(depth: 2))
            case 4: changes.deleteAll(PropertyRow.self, ids: someIDs)
            default: break
            }
            try pending.submit(changes)
            try await reference.submit(changes).committed()
            #expect(pending.pendingCount == round + 1)

            for index in 0..<25 {
                let query = random.query(random.filter())
                let context = "seed \(seed) (rerun with STRATA_SEED=\(seed)), round \(round), query \(index): \(describe(query))"
                let overlaid = try await pending.fetch(query)
                let committed = try await reference.fetch(query)
                let agrees = overlaid.map(\.id) == committed.map(\.id)
                #expect(agrees, "\(context): \(difference(overlaid, committed))")
                #expect(!agrees || overlaid == committed, "\(context): \(difference(overlaid, committed))")
                #expect(try await pending.count(query) == committed.count, "\(context)")
                compared += 1
                if !agrees { return }  // one reproducible failure is enough
            }
            let all = try await (pending.fetch(Query<PropertyRow>()), reference.fetch(Query<PropertyRow>()))
            #expect(all.0 == all.1, "seed \(seed), round \(round): \(difference(all.0, all.1))")
        }
        #expect(compared == 200)
        #expect(pending.pendingCount == 8, "nothing may commit while the other connection holds the lock")

        holder.released.signal()
        #expect(try await lock.value)
        var committedAll = false
        for _ in 0..<20 where !committedAll {
            do {
                try await pending.persist()
                committedAll = true
            } catch let error as StrataError where error.code == .busy {
                continue
            }
        }
        #expect(committedAll)
        let all = try await (pending.fetch(Query<PropertyRow>()), reference.fetch(Query<PropertyRow>()))
        #expect(all.0 == all.1, "seed \(seed): \(difference(all.0, all.1))")
    }

    // MARK: Specific semantics, each checked in SQL and in memory

    /// Hand-built rows whose expected results follow from SQLite's rules.
    private static let rows: [PropertyRow] = [
        PropertyRow(id: 1, amount: 1, score: 1.5, name: nil, flag: false, stamp: Date(timeIntervalSinceReferenceDate: 0),
                    rank: nil, body: "alpha beta"),
        PropertyRow(id: 2, amount: 2, score: 2, name: "a", flag: true, stamp: Date(timeIntervalSinceReferenceDate: 60),
                    rank: 2, body: "Alphabet soup"),
        PropertyRow(id: 3, amount: 3, score: 2.5, name: "Z", flag: false, stamp: Date(timeIntervalSinceReferenceDate: -60),
                    rank: nil, body: "gamma-delta"),
        PropertyRow(id: 4, amount: (1 << 53) + 1, score: 9_007_199_254_740_992, name: "\u{E9}", flag: true,
                    stamp: Date(timeIntervalSinceReferenceDate: 0.5), rank: 1, body: ""),
        PropertyRow(id: 5, amount: -1, score: -0.5, name: "e\u{301}", flag: false, stamp: Date(timeIntervalSinceReferenceDate: 1),
                    rank: 5, body: "BETA, omega."),
        PropertyRow(id: 6, amount: .max, score: .infinity, name: "", flag: true, stamp: Date(timeIntervalSinceReferenceDate: 2),
                    rank: -2, body: "bet"),
    ]

    /// Asserts that SQLite and the in-memory evaluator both return `expected` (IDs, in order).
    private func check(_ query: Query<PropertyRow>, _ expected: [Int64], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let directory = try TemporaryDirectory()
        let (store, schema, encoded) = try await makeStore(directory, "semantics.sqlite", rows: Self.rows)
        #expect(try await store.ids(query) == expected, "SQL: \(describe(query))", sourceLocation: sourceLocation)
        #expect(try evaluateInMemory(query, schema, encoded) == expected, "in memory: \(describe(query))",
                sourceLocation: sourceLocation)
    }

    private func check(_ filter: Filter, _ expected: [Int64], sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await check(Query(where: filter), expected, sourceLocation: sourceLocation)
    }

    @Test func notOfAComparisonWithNullExcludesTheRow() async throws {
        // rank is NULL for rows 1 and 3: `rank < 3` is unknown there, and so is its negation.
        try await check(Attribute("rank") < 3, [2, 4, 6])
        try await check(!(Attribute("rank") < 3), [5])
        try await check(Attribute("rank") != 2, [4, 5, 6])
        try await check(!(Attribute("rank") != 2), [2])
        // Comparing with NULL is unknown for every row; NOT keeps it unknown.
        try await check(Attribute("amount") < Int64?.none, [])
        try await check(!(Attribute("amount") < Int64?.none), [])
        // Unknown OR true is true; unknown AND false is false, and NOT of that is true.
        try await check(Attribute("rank") < 3 || Attribute("amount") == 3, [2, 3, 4, 6])
        try await check(!(Attribute("rank") < 3 && Attribute("amount") == 99), [1, 2, 3, 4, 5, 6])
        try await check(!(Attribute("rank") < 3 && Attribute("amount") == 3), [1, 2, 4, 5, 6])
        // `== nil` and `!= nil` are IS NULL and IS NOT NULL, never unknown.
        try await check(Attribute("rank") == Int?.none, [1, 3])
        try await check(!(Attribute("rank") != Int?.none), [1, 3])
    }

    @Test func inListWithNullIsUnknownForNonMembers() async throws {
        let withNull = Attribute("rank").in([DatabaseValue.integer(1), .null])
        // rank 1 is a member; ranks 2, 5, -2 are unknown (not excluded by NULL); NULL ranks are unknown.
        try await check(withNull, [4])
        try await check(!withNull, [])
        try await check(Attribute("rank").in([1, 2]), [2, 4])
        try await check(!Attribute("rank").in([1, 2]), [5, 6])
        try await check(Attribute("rank").in([Int]()), [])
        try await check(!Attribute("rank").in([Int]()), [1, 2, 3, 4, 5, 6])
        try await check(Attribute("name").in([DatabaseValue.null]), [])
        try await check(!Attribute("name").in([DatabaseValue.null]), [])
    }

    @Test func integersAndRealsCompareByExactNumericValue() async throws {
        try await check(Attribute("amount") == 2.0, [2])
        try await check(Attribute("amount") > 2.5, [3, 4, 6])
        try await check(Attribute("score") == 2, [2])
        try await check(Attribute("amount").in([2.0, 3.5]), [2])
        // 2^53 + 1 has no exact Double: it is still greater than 2^53 as a REAL.
        try await check(Attribute("amount") > 9_007_199_254_740_992.0, [4, 6])
        try await check(Attribute("amount") == 9_007_199_254_740_992.0, [])
        try await check(Attribute("amount").in([9_007_199_254_740_992.0]), [])
        // The REAL 2^53 is less than the INTEGER 2^53 + 1.
        try await check(Attribute("score") < Int64((1 << 53) + 1) && Attribute("score") > 1_000, [4])
        try await check(Attribute("score") >= Int64((1 << 53) + 1), [6])
        // Int64.max converts to the Double 2^63, which is larger than it.
        try await check(Attribute("amount") < 9_223_372_036_854_775_808.0, [1, 2, 3, 4, 5, 6])
        try await check(Attribute("amount") >= 9.3e18, [])
        try await check(Attribute("score") > Int64.max, [6])
        try await check(Attribute("amount") < Double.infinity && Attribute("amount") > -Double.infinity, [1, 2, 3, 4, 5, 6])
    }

    @Test func textComparesByteWise() async throws {
        // "" < "Z" (0x5A) < "a" (0x61) < "e\u{301}" (0x65 …) < "\u{E9}" (0xC3 0xA9).
        try await check(Attribute("name") < "a", [3, 6])
        try await check(Attribute("name") > "e", [4, 5])
        try await check(Attribute("name") == "\u{E9}", [4])
        try await check(Attribute("name") == "e\u{301}", [5])
        try await check(Attribute("name").in(["\u{E9}"]), [4])
        try await check(Attribute("name").hasPrefix("e"), [5])
        try await check(Attribute("name").contains("\u{301}"), [5])
        try await check(Attribute("name").contains(""), [2, 3, 4, 5, 6])
        try await check(Attribute("name").hasPrefix(""), [2, 3, 4, 5, 6])
        try await check(!Attribute("name").contains("a"), [3, 4, 5, 6])
        try await check(Attribute("body").hasPrefix("Alpha"), [2])
        try await check(Attribute("body").contains("beta"), [1])
        try await check(Query(sortedBy: [Attribute("name").ascending]), [1, 6, 3, 2, 5, 4])
    }

    @Test func descendingSortPutsNullsLastAndTiesGoByPrimaryKey() async throws {
        try await check(Query(sortedBy: [Attribute("name").descending]), [4, 5, 2, 3, 6, 1])
        try await check(Query(sortedBy: [Attribute("rank").descending]), [5, 2, 4, 6, 1, 3])
        try await check(Query(sortedBy: [Attribute("rank").ascending]), [1, 3, 6, 4, 2, 5])
        try await check(Query(sortedBy: [Attribute("flag").descending, Attribute("rank").descending]), [2, 4, 6, 5, 1, 3])
        try await check(Query(sortedBy: [Attribute("score").descending], limit: 2, offset: 1), [4, 3])
        try await check(Query(sortedBy: [Attribute("amount").ascending, Attribute("stamp").descending]), [5, 1, 2, 3, 4, 6])
    }

    @Test func fullTextMatchesWordsAndPrefixesIgnoringCase() async throws {
        try await check(Filter.matches("alpha"), [1])
        try await check(Filter.matches("alpha*"), [1, 2])
        try await check(Filter.matches("BETA"), [1, 5])
        try await check(Filter.matches("bet*"), [1, 5, 6])
        try await check(Filter.matches("delta gamma"), [3])
        try await check(Filter.matches("gamma-omega"), [])
        try await check(!Filter.matches("bet*"), [2, 3, 4])
        try await check(Filter.matches(""), [])
        try await check(Filter.matches("*"), [])
        try await check(Filter.matches("beta") || Attribute("rank") < 0, [1, 5, 6])
    }

    @Test func limitAndOffsetFollowSQLite() async throws {
        try await check(Query(limit: 0), [])
        try await check(Query(limit: 2, offset: 5), [6])
        try await check(Query(offset: 4), [5, 6])
        try await check(Query(offset: 10), [])
        // A negative LIMIT means no limit in SQLite; the in-memory evaluator must agree.
        try await check(Query(limit: -1, offset: 2), [3, 4, 5, 6])
        // The largest limit must not overflow past an offset.
        try await check(Query(limit: Int.max, offset: 1), [2, 3, 4, 5, 6])
    }

    @Test func filterValuesOfTheWrongStorageClassAreRejected() async throws {
        let directory = try TemporaryDirectory()
        let (store, _, _) = try await makeStore(directory, "types.sqlite", rows: Self.rows)
        await #expect(throws: StrataError.self) { try await store.fetch(Query<PropertyRow>(where: Attribute("amount") == "1")) }
        await #expect(throws: StrataError.self) { try await store.fetch(Query<PropertyRow>(where: Attribute("name") == 1)) }
        await #expect(throws: StrataError.self) { try await store.fetch(Query<PropertyRow>(where: Attribute("score") < Double.nan)) }
        await #expect(throws: StrataError.self) { try await store.fetch(Query<PropertyRow>(where: Attribute("amount").hasPrefix("1"))) }
        await #expect(throws: StrataError.self) { try await store.fetch(Query<PropertyRow>(where: Attribute("missing") == 1)) }
    }
}
