import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A reading whose snapshot order is `(stamp descending, level)`; it declares indexes on the
/// order's leading attributes (served by the sorted index, no hash maps) and one elsewhere.
private struct Reading: Entity, Equatable {
    var id: Int64
    var stamp: Double
    var level: Int64?
    var flag: Bool

    static let tableName = "readings"
    static let indexes = [EntityIndex(["stamp"]), EntityIndex(["stamp", "level"]), EntityIndex(["flag"])]
    static let snapshotOrder = [Attribute("stamp").descending, Attribute("level").ascending]
}

/// Equalities on the snapshot order's leading attributes are answered from the sorted index
/// (`SortedIndex.equalRun`), and a declared index on those attributes keeps no hash maps.
@MainActor
@Suite struct SortedIndexEqualityTests {
    @Test func onlyIndexesOffTheOrdersLeadingAttributesAreHashed() throws {
        let schema = try SchemaRegistry([Reading.self]).schema(for: Reading.self)
        #expect(EntityTable.hashedDeclarations(of: schema).map(\.attributes) == [["flag"]])
        // An index longer than the order, or on its second attribute alone, is hashed.
        var other = schema
        other.snapshotOrder = [Attribute("stamp").descending]
        other.indexes = [EntityIndex(["stamp"]), EntityIndex(["stamp", "level"]), EntityIndex(["level"])]
        #expect(EntityTable.hashedDeclarations(of: other).map(\.attributes) == [["stamp", "level"], ["level"]])
    }

    /// Seeded rounds of merged change sets (off the main actor, threshold 2, and in place); after
    /// each, every equality query — on the order's first attribute, its first two, with another
    /// condition beside them, with integers against the REAL stamp, with `IS NULL` — counts and lists
    /// on the main context what the plain model and SQL hold, also with an unsaved edit.
    @Test(.hangWatchdog, arguments: [2, 1_000_000])
    func equalitiesOnTheOrdersLeadingAttributesAnswerAsSQL(threshold: Int) async throws {
        var (random, seed) = SeededRandom.forTest("equalitiesOnTheOrdersLeadingAttributesAnswerAsSQL \(threshold)")
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [Reading.self])
        let main = store.mainContext
        main.preparedMergeThreshold = threshold
        try await main.loadResidentEntities()
        let stamps: [Double] = [-1.5, -0.0, 0, 1, 2, 2.5, 1e300]
        let levels: [Int64?] = [nil, -1, 0, 1, 2]
        var model: [Int64: Reading] = [:]
        func reading(_ id: Int64) -> Reading {
            Reading(id: id, stamp: stamps[random.next(stamps.count)], level: levels[random.next(levels.count)],
                    flag: random.next(2) == 0)
        }
        for round in 0..<8 {
            var changeSet = ChangeSet()
            for _ in 0..<(30 + random.next(60)) {
                let id = Int64(random.next(120))
                if random.next(5) == 0 {
                    guard model[id] != nil else { continue }
                    changeSet.delete(Reading.self, id: id)
                    model[id] = nil
                } else {
                    let new = reading(id)
                    changeSet.upsert(new)
                    model[id] = new
                }
            }
            let submission = try store.submit(changeSet)
            try await submission.committed()
            await main.waitUntilMerged(through: submission.sequence)
            var shown = model
            if round >= 5, let id = model.keys.min() {
                // An unsaved edit: the main context answers with it, SQL without.
                var edited = try #require(main.object(Reading.self, id: id))
                edited.stamp = stamps[random.next(stamps.count)]
                try main.update(edited)
                shown[id] = edited
            }
            for stamp in stamps {
                let stampValues: [DatabaseValue] = Int64(exactly: stamp).map { [.real(stamp), .integer($0)] } ?? [.real(stamp)]
                for value in stampValues {
                    var filters: [(Filter, (Reading) -> Bool)] = [(Attribute("stamp") == value, { $0.stamp == stamp })]
                    for level in levels {
                        let levelValue = level.map(DatabaseValue.integer) ?? .null
                        // `== .null` is `IS NULL`.
                        filters.append((Attribute("stamp") == value && Attribute("level") == levelValue,
                                        { $0.stamp == stamp && $0.level == level }))
                        filters.append((Attribute("level") == levelValue && Attribute("stamp") == value && Attribute("flag") == true,
                                        { $0.stamp == stamp && $0.level == level && $0.flag }))
                    }
                    for (filter, matches) in filters {
                        let context = "seed \(seed), round \(round), \(filter)"
                        let query = Query<Reading>(where: filter)
                        let expected = shown.values.filter(matches).map(\.id).sorted()
                        #expect(try main.count(matching: query) == expected.count, "\(context): count")
                        #expect(try main.ids(matching: query).sorted() == expected, "\(context): ids")
                        let stored = model.values.filter(matches).map(\.id).sorted()
                        #expect(try await store.fetch(query).map(\.id).sorted() == stored, "\(context): SQL")
                    }
                }
            }
            main.rollback()
        }
        try await store.close()
    }
}
