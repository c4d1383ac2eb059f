import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A save of several entities lists them in the order the app first edited each — in its change
/// set and in the history entries it makes — the same on every run, never in the order a
/// dictionary of tables happens to hold them.
@MainActor
@Suite struct HistoryOrderTests {
    struct Shelf: Entity, Equatable { var id: Int64; var name: String }
    struct Crate: Entity, Equatable { var id: Int64; var name: String }
    struct Label: Entity, Equatable { var id: Int64; var name: String }
    struct Pallet: Entity, Equatable { var id: Int64; var name: String }

    private static let entities: [any Entity.Type] = [Shelf.self, Crate.self, Label.self, Pallet.self]

    private func insert(_ entity: Int, id: Int64, into main: MainContext) throws {
        switch entity {
        case 0: try main.insert(Shelf(id: id, name: "shelf"))
        case 1: try main.insert(Crate(id: id, name: "crate"))
        case 2: try main.insert(Label(id: id, name: "label"))
        default: try main.insert(Pallet(id: id, name: "pallet"))
        }
    }

    /// Every order of four entities, one save each: a dictionary's order would match one of the 24.
    @Test func aSaveListsItsEntitiesInTheOrderTheyWereFirstEdited() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: Self.entities)
        let main = store.mainContext
        let start = try await store.currentChangeToken()
        let orders = permutations(of: Array(0..<4))
        for (index, order) in orders.enumerated() {
            for entity in order { try insert(entity, id: Int64(index), into: main) }
            try main.save()
        }
        // Interleaved: the second Shelf joins the first Shelf's entry, before the Crate's.
        try insert(0, id: 100, into: main)
        try insert(1, id: 100, into: main)
        try insert(0, id: 101, into: main)
        try main.save()
        try await store.persist()

        var transactions: [HistoryTransaction] = []
        for try await transaction in store.history(since: start) { transactions.append(transaction) }
        let names = Self.entities.map { $0.entityName }
        #expect(transactions.count == orders.count + 1)
        for (order, transaction) in zip(orders, transactions) {
            #expect(transaction.changes.map(\.entity) == order.map { names[$0] }, "order \(order)")
        }
        #expect(transactions.last?.changes.map { "\($0.entity) \($0.ids.map(\.description))" }
                == ["Shelf [\"100\", \"101\"]", "Crate [\"100\"]"])
        try await store.close()
    }

    /// An entity whose edits were all undone before the save takes its place again from its next edit.
    @Test func anEntityEditedAgainAfterItsEditsWereUndoneTakesItsNewPlace() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: Self.entities)
        let main = store.mainContext
        let start = try await store.currentChangeToken()
        try main.insert(Shelf(id: 1, name: "shelf"))
        try main.delete(Shelf.self, id: 1)   // an insert deleted before the save: no edit left
        try main.insert(Crate(id: 1, name: "crate"))
        try main.insert(Shelf(id: 2, name: "shelf"))
        try main.save()
        try await store.persist()
        var entities: [String] = []
        for try await transaction in store.history(since: start) { entities += transaction.changes.map(\.entity) }
        #expect(entities == ["Crate", "Shelf"])
        try await store.close()
    }

    private func permutations(of items: [Int]) -> [[Int]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(of: rest).map { [first] + $0 }
        }
    }
}
