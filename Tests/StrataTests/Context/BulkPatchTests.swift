import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// An entity with an index of three levels, one over its last attribute alone, and one over an
/// attribute bulk updates leave alone: a bulk update moves objects at any level of them.
struct Triple: Entity, Equatable {
    var id: Int64
    var a: Int
    var b: Int
    var c: String?
    var score: Double

    static let isResident = true
    static let indexes = [EntityIndex(["a", "b", "c"]), EntityIndex(["c"]), EntityIndex(["score"])]
}

/// A bulk update is merged object by object into the cells, and its index moves are made at
/// the end, group by group (`EntityTable.BulkPatch`, `InMemoryIndex.apply(_:)`).
@MainActor
@Suite struct BulkPatchTests {
    /// Seeded rounds of bulk updates (by IDs, some repeated or not held, or by filter) that assign
    /// one to three of the indexed attributes, often a value an object has already; after each,
    /// every key of every level answers as the plain model does, by count and by IDs, and the
    /// change names each object whose values changed with exactly the attributes that did.
    /// Merged off the main actor (threshold 2) and in place; the objects were loaded first, so
    /// the first moves leave postings listed when the load built the indexes.
    @Test(.hangWatchdog, arguments: [2, 1_000_000])
    func bulkUpdatesMoveObjectsAtEveryLevelOfTheIndexes(threshold: Int) async throws {
        var (random, seed) = SeededRandom.forTest("bulkUpdatesMoveObjectsAtEveryLevelOfTheIndexes \(threshold)")
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [Triple.self])
        var model: [Int64: Triple] = [:]
        var initial = ChangeSet()
        for id in Int64(0)..<160 {
            let triple = Triple(id: id, a: random.next(3), b: random.next(3), c: random.next(4) == 0 ? nil : "c\(random.next(3))",
                                score: Double(random.next(1_000)))
            initial.insert(triple)
            model[id] = triple
        }
        try await store.submit(initial).committed()
        let main = store.mainContext
        main.preparedMergeThreshold = threshold
        try await main.loadResidentEntities()
        var changes: [ContextChange] = []
        let observation = main.onChange { changes.append($0) }
        defer { observation.cancel() }

        for round in 0..<24 {
            let context = "seed \(seed), round \(round)"
            var values: [String: any DatabaseValueConvertible] = [:]
            while values.isEmpty {
                if random.next(2) == 0 { values["a"] = random.next(3) }
                if random.next(2) == 0 { values["b"] = random.next(3) }
                if random.next(2) == 0 { values["c"] = random.next(4) == 0 ? String?.none : "c\(random.next(3))" }
            }
            let before = model
            let reached: [Int64]
            if random.next(4) == 0 {
                let a = random.next(3)
                reached = model.values.filter { $0.a == a }.map(\.id)
                try await main.updateAll(Triple.self, where: Attribute("a") == a, set: values).committed()
            } else {
                // Some IDs twice, some not held (the store skips them).
                let ids = (0..<(1 + random.next(120))).map { _ in Int64(random.next(180)) }
                reached = Array(Set(ids.filter { model[$0] != nil }))
                try await main.updateAll(Triple.self, ids: ids, set: values).committed()
            }
            for id in reached {
                if let a = values["a"] as? Int { model[id]!.a = a }
                if let b = values["b"] as? Int { model[id]!.b = b }
                if let c = values["c"] { model[id]!.c = c as? String }
            }

            for a in 0..<3 {
                try expect(main, Attribute("a") == a, model.values.filter { $0.a == a }, context)
                for b in 0..<3 {
                    try expect(main, Attribute("a") == a && Attribute("b") == b, model.values.filter { $0.a == a && $0.b == b }, context)
                    for c in ["c0", "c1", "c2"] {
                        try expect(main, Attribute("a") == a && Attribute("b") == b && Attribute("c") == c,
                               model.values.filter { $0.a == a && $0.b == b && $0.c == c }, context)
                    }
                }
            }
            for c in ["c0", "c1", "c2"] { try expect(main, Attribute("c") == c, model.values.filter { $0.c == c }, context) }
            let someScore = model[Int64(random.next(160))]!.score
            try expect(main, Attribute("score") == someScore, model.values.filter { $0.score == someScore }, context)
            #expect(main.objects(Triple.self).sorted { $0.id < $1.id } == model.values.sorted { $0.id < $1.id }, "\(context): objects")

            var expectedUpdates: [Int64: Set<String>] = [:]
            for id in reached {
                let old = before[id]!, new = model[id]!
                let names = Set([old.a != new.a ? "a" : nil, old.b != new.b ? "b" : nil, old.c != new.c ? "c" : nil].compactMap { $0 })
                if !names.isEmpty { expectedUpdates[id] = names }
            }
            let published = changes.last.map { $0.updated(Triple.self) } ?? [:]
            #expect(published == expectedUpdates, "\(context): the change names what changed")
            changes.removeAll()
        }
        try await store.close()
    }

    private func expect(_ main: MainContext, _ filter: Filter, _ expected: [Triple], _ context: String,
                        sourceLocation: SourceLocation = #_sourceLocation) throws {
        let query = Query<Triple>(where: filter)
        let ids = expected.map(\.id).sorted()
        #expect(try main.count(matching: query) == ids.count, "\(context): count of \(filter)", sourceLocation: sourceLocation)
        #expect(try main.ids(matching: query).sorted() == ids, "\(context): IDs of \(filter)", sourceLocation: sourceLocation)
    }
}
