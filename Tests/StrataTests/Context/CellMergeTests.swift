import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// An entity with a text key, so that keys live in the arena too, and a snapshot order.
private struct Memo: Entity, Equatable {
    var id: String
    var group: Int
    var body: String
    var attachment: Data?

    static let indexes = [EntityIndex(["group"])]
    static let snapshotOrder = [Attribute("group").descending, Attribute("body").ascending]

    /// Whether `self` comes before `other` in the snapshot order (then by key, ascending).
    func precedes(_ other: Memo) -> Bool {
        if group != other.group { return group > other.group }
        if body != other.body { return Array(body.utf8).lexicographicallyPrecedes(other.body.utf8) }
        return Array(id.utf8).lexicographicallyPrecedes(other.id.utf8)
    }
}

/// A change set's saves reach a context's table as cells (`CellRows`): built when the change set
/// is sealed for the main context, or made by the merge for saves that carry none. Either way the
/// context holds the same objects, posts them to the same indexes and publishes the same change —
/// including a change set of new objects only, whose inserts are listed as the key set hashed
/// when it was sealed.
@Suite struct CellMergeTests {
    private let registry = try! SchemaRegistry([Memo.self])

    /// A graph as the main context's, its table's in-memory indexes on.
    private func makeGraph() throws -> ObjectGraph {
        let graph = ObjectGraph(registry: registry, identity: ContextIdentity(id: UUID(), name: "cells"), policy: .localWins,
                                registersNew: true, keepsIndexes: true, valueCacheLimit: 0, startingAt: 0)
        try graph.table(Memo.self).enableIndexes()
        return graph
    }

    private func sealed(_ changes: ChangeSet, buildsCells: Bool) throws -> ChangeSet {
        try changes.sealed(buildsCells: buildsCells) { RowEncoder(schema: try registry.schema(named: $0)) }
    }

    /// Seeded rounds of one change set each — some of new objects only, the others mixing new
    /// keys with updates, upserts of held keys, a key saved twice and deletions — merged into
    /// three graphs: sealed with cells, sealed without, and not sealed at all. All three hold
    /// the model's objects and index them as it has them, and publish the same change.
    @Test func cellsBuiltWhenSealedOrMadeByTheMergeGiveTheSameContext() throws {
        var (random, seed) = SeededRandom.forTest("cellsBuiltWhenSealedOrMadeByTheMergeGiveTheSameContext")
        let graphs = try (0..<3).map { _ in try makeGraph() }
        var model: [String: Memo] = [:]
        var listedAtOnce = 0
        func memo(_ id: String) -> Memo {
            Memo(id: id, group: random.next(4), body: String(repeating: "b\(random.next(9))", count: random.next(40)),
                 attachment: random.next(3) == 0 ? nil : Data((0..<random.next(30)).map { UInt8($0) }))
        }
        for round in 0..<40 {
            let context = "seed \(seed), round \(round)"
            let before = model
            var changes = ChangeSet()
            let onlyNew = round % 3 == 0
            for _ in 0..<(1 + random.next(40)) {
                let id = "memo-\(random.next(onlyNew ? 1_000_000 : 120))-\u{E9}"
                if onlyNew {
                    guard model[id] == nil else { continue }
                    let new = memo(id)
                    changes.insert(new)
                    model[id] = new
                    continue
                }
                switch random.next(5) {
                case 0, 1, 2:
                    let new = memo(id)
                    changes.upsert(new)
                    model[id] = new
                case 3:
                    changes.delete(Memo.self, id: id)
                    model[id] = nil
                default:
                    // The same key twice in a row: the second save updates the row the first made.
                    let first = memo(id), second = memo(id)
                    changes.upsert(first)
                    changes.upsert(second)
                    model[id] = second
                }
            }
            let forms = [try sealed(changes, buildsCells: true), try sealed(changes, buildsCells: false), changes]
            if onlyNew, case .save(let save)? = forms[0].operations.first, save.cells?.keys != nil { listedAtOnce += 1 }
            // The sealed cells list their rows in the snapshot order (a settle then finds them sorted).
            var saved: [Memo] = []
            var cells: CellRows?
            for case .save(let save) in forms[0].operations {
                saved.append(save.object as! Memo)
                cells = save.cells
            }
            if let cells {
                let sorted = saved.indices.sorted { saved[$0].precedes(saved[$1]) || !saved[$1].precedes(saved[$0]) && $0 < $1 }
                #expect(cells.order == sorted, "\(context): the cells' order")
            }
            var published: [ContextChange.EntityChanges] = []
            for (graph, form) in zip(graphs, forms) {
                let change = try graph.merge(sequence: UInt64(round + 1), changes: form)
                published.append(change?.entities["Memo"] ?? .init())
                let table = try graph.table(Memo.self)
                let held = Set(table.saved.liveSlots.map { table.saved.key(at: $0) })
                #expect(held == Set(model.keys.map(DatabaseValue.text)), "\(context): keys held")
                for (id, memo) in model {
                    let row = try RowEncoder(schema: table.schema).encode(memo)
                    #expect(table.visibleRow(.text(id)) == row, "\(context): \(id)")
                }
                table.settleOrder()
                let ordered = try #require(table.ordered).slots.map(table.saved.key(at:))
                #expect(ordered == model.values.sorted { $0.precedes($1) }.map { DatabaseValue.text($0.id) },
                        "\(context): the snapshot order")
                for group in 0..<4 {
                    let filter = try ResolvedFilter(Attribute("group") == group, schema: table.schema)
                    let keys = try table.candidateKeys(filter).filter { table.visibleRow($0)?[1] == .integer(Int64(group)) }
                    #expect(Set(keys) == Set(model.values.filter { $0.group == group }.map { DatabaseValue.text($0.id) }),
                            "\(context): group \(group)")
                }
            }
            #expect(published[0] == published[1] && published[1] == published[2], "\(context): the published changes differ")
            let inserted = Set(model.keys).subtracting(before.keys).map(DatabaseValue.text)
            #expect(published[0].inserted == Set(inserted), "\(context): inserted")
            #expect(published[0].deleted == Set(Set(before.keys).subtracting(model.keys).map(DatabaseValue.text)), "\(context): deleted")
        }
        #expect(listedAtOnce >= 10, "seed \(seed): only \(listedAtOnce) change sets of new objects only")
    }

    /// A change set of new objects after which one already held is saved: the new ones before
    /// it, listed by the key set until then, are listed one by one, and the held one is updated.
    @Test func aHeldObjectAfterNewOnesListsEachAsItIs() throws {
        let graph = try makeGraph()
        var first = ChangeSet()
        first.insert(Memo(id: "held", group: 0, body: "old", attachment: nil))
        _ = try graph.merge(sequence: 1, changes: try sealed(first, buildsCells: true))
        var changes = ChangeSet()
        for index in 0..<5 { changes.insert(Memo(id: "new-\(index)", group: 1, body: "n", attachment: Data([1]))) }
        changes.upsert(Memo(id: "held", group: 2, body: "new", attachment: nil))
        changes.insert(Memo(id: "last", group: 1, body: "l", attachment: nil))
        let change = try #require(try graph.merge(sequence: 2, changes: try sealed(changes, buildsCells: true)))
        let memos = try #require(change.entities["Memo"])
        #expect(memos.inserted == Set((0..<5).map { DatabaseValue.text("new-\($0)") } + [.text("last")]))
        #expect(memos.updated == [.text("held"): ["group", "body"]])
        #expect(memos.deleted.isEmpty)
        #expect(try graph.table(Memo.self).visibleRow(.text("held"))?[2] == .text("new"))
    }
}
