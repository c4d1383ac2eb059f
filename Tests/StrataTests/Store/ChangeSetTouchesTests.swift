import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A note with a text key, and a label with an integer key: two entities, so that keys of one
/// never count for the other.
private struct Jot: Entity, Equatable {
    var id: String
    var body: String
}

private struct Badge: Entity, Equatable {
    var id: Int64
    var name: String
}

/// A save checks that nothing accepted but not merged touches an object it writes
/// (`ChangeSet.touches`), and does the costly part of that check before taking the store's lock,
/// which every other save waits for.
@Suite struct ChangeSetTouchesTests {
    private let registry = try! SchemaRegistry([Jot.self, Badge.self])

    private func sealed(_ changes: ChangeSet, buildsCells: Bool) throws -> ChangeSet {
        try changes.sealed(buildsCells: buildsCells) { RowEncoder(schema: try registry.schema(named: $0)) }
    }

    /// Seeded change sets of saves (some keys saved twice, so their cells have no key set),
    /// deletions and bulk operations by IDs or by filter, asked about key sets smaller and larger
    /// than themselves: unsealed, sealed, and sealed with cells, each answers what its written
    /// keys say.
    @Test func touchesAnswersWhatTheWrittenKeysSay() throws {
        var (random, seed) = SeededRandom.forTest("touchesAnswersWhatTheWrittenKeysSay")
        var overlaps = 0, bySize = (smaller: 0, larger: 0)
        for round in 0..<200 {
            let context = "seed \(seed), round \(round)"
            var changes = ChangeSet()
            // The keys written, whether a filter writes any badge, and whether any operation is a jot's.
            var written: (jots: Set<String>, badges: Set<Int64>, anyBadge: Bool, jotRun: Bool) = ([], [], false, false)
            let size = [1, 5, 60, 400][random.next(4)]
            let keySpace = size * 3
            for _ in 0..<size {
                let id = random.next(keySpace)
                switch random.next(12) {
                case 0:
                    changes.delete(Jot.self, id: "n\(id)")
                    written.jots.insert("n\(id)")
                    written.jotRun = true
                case 1:
                    changes.delete(Badge.self, id: Int64(id))
                    written.badges.insert(Int64(id))
                case 2:
                    let ids = (0..<random.next(4)).map { _ in "n\(random.next(keySpace))" }
                    changes.updateAll(Jot.self, ids: ids, set: ["body": "bulk"])
                    written.jots.formUnion(ids)
                    written.jotRun = true
                case 3 where random.next(10) == 0:
                    changes.deleteAll(Badge.self, where: Attribute("name") == "x")
                    written.anyBadge = true
                case 4, 5, 6:
                    changes.upsert(Badge(id: Int64(id), name: "l\(id)"))
                    written.badges.insert(Int64(id))
                default:
                    changes.upsert(Jot(id: "n\(id)", body: "b\(id)"))
                    written.jots.insert("n\(id)")
                    written.jotRun = true
                }
            }
            // What another save writes: a few keys, or many, or any object of an entity.
            let askedSize = [1, 3, 50, 2_000][random.next(4)]
            var asked: [String: Set<DatabaseValue>?] = [:]
            var expected = false
            if random.next(3) > 0 {
                if random.next(15) == 0 {
                    // Any jot: touched by any operation on jots, even a bulk update of no IDs.
                    asked["Jot"] = .some(nil)
                    expected = expected || written.jotRun
                } else {
                    let jots = Set((0..<askedSize).map { _ in "n\(random.next(keySpace * 2))" })
                    asked["Jot"] = Set(jots.map(DatabaseValue.text))
                    expected = expected || !jots.isDisjoint(with: written.jots)
                }
            }
            if random.next(3) > 0 {
                let badges = Set((0..<askedSize).map { _ in Int64(random.next(keySpace * 2)) })
                asked["Badge"] = Set(badges.map(DatabaseValue.integer))
                expected = expected || written.anyBadge || !badges.isDisjoint(with: written.badges)
            }
            for variant in [changes, try sealed(changes, buildsCells: false), try sealed(changes, buildsCells: true)] {
                #expect(variant.touches(asked) == expected, "\(context)")
            }
            if expected { overlaps += 1 }
            if askedSize < size { bySize.smaller += 1 } else { bySize.larger += 1 }
        }
        // Both answers, and both sides of the size comparison, were exercised.
        #expect(overlaps > 20 && overlaps < 180, "seed \(seed)")
        #expect(bySize.smaller > 20 && bySize.larger > 20, "seed \(seed)")
    }

    /// A sealed run's cells hash its keys once (`CellRows.keys`); the check uses that set, and a
    /// run whose keys repeat (no set) is checked save by save.
    @Test func cellsKeySetsAreUsedWhenPresent() throws {
        var distinct = ChangeSet(), repeated = ChangeSet()
        for id in 0..<50 { distinct.upsert(Jot(id: "n\(id)", body: "")) }
        for id in [1, 2, 1] { repeated.upsert(Jot(id: "n\(id)", body: "")) }
        let withSet = try sealed(distinct, buildsCells: true), withoutSet = try sealed(repeated, buildsCells: true)
        guard case .save(let first) = withSet.operations[0], case .save(let other) = withoutSet.operations[0] else {
            Issue.record("not saves")
            return
        }
        #expect(first.cells?.keys?.count == 50)
        #expect(other.cells != nil && other.cells?.keys == nil)
        #expect(withSet.touches(["Jot": [.text("n49")]]))
        #expect(!withSet.touches(["Jot": [.text("n50")], "Badge": [.integer(1)]]))
        #expect(withoutSet.touches(["Jot": [.text("n2")]]))
        #expect(!withoutSet.touches(["Jot": [.text("n3")]]))
    }

    // MARK: The check before and under the store's lock

    /// A worker's graph with one unsaved edit of badge 1.
    private func graphEditingLabelOne(_ store: Store) throws -> ObjectGraph {
        let graph = ObjectGraph(registry: store.registry, identity: ContextIdentity(id: UUID(), name: "w"), policy: .localWins,
                                registersNew: false, keepsIndexes: false, valueCacheLimit: 0, startingAt: 0)
        try graph.table(Badge.self).insert(Badge(id: 1, name: "mine"), policy: .localWins)
        return graph
    }

    /// A change set accepted elsewhere that writes badge `id`.
    private func other(writing id: Int64) throws -> ChangeSet {
        var changes = ChangeSet()
        changes.upsert(Badge(id: id, name: "theirs"))
        return try sealed(changes, buildsCells: false)
    }

    /// What a context's mailbox holds, scripted: `waiting` until the save merges everything,
    /// and `arriving` on every look after the first (accepted after the save first looked).
    private final class Mailbox: Sendable {
        let state = Locked((looks: 0, merged: false))
        let waiting: [StoreEvent], arriving: [StoreEvent]
        init(waiting: [StoreEvent], arriving: [StoreEvent] = []) { (self.waiting, self.arriving) = (waiting, arriving) }
        func unmerged() -> [StoreEvent] {
            state.withLock { state in
                state.looks += 1
                return state.merged ? [] : waiting + (state.looks > 1 ? arriving : [])
            }
        }
    }

    /// Saves `graph` with `mailbox`; returns how many times the save merged everything (a retry)
    /// and how many change sets the store accepted.
    private func save(_ graph: ObjectGraph, _ store: Store, _ mailbox: Mailbox) throws -> (retries: Int, accepted: UInt64) {
        let before = store.acceptedSequence
        var retries = 0
        let saved = try graph.save(to: store, absorb: { everything in
            guard everything else { return }
            retries += 1
            mailbox.state.withLock { $0.merged = true }
        }, unmerged: mailbox.unmerged)
        #expect(saved != nil)
        return (retries, store.acceptedSequence - before)
    }

    @Test func aChangeSetWaitingBeforeTheSaveIsCheckedBeforeTheLock() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("touches.sqlite"), entities: [Jot.self, Badge.self])
        // Touching: the save merges it and tries again; nothing was submitted by the first try.
        let touching = try save(try graphEditingLabelOne(store), store, Mailbox(waiting: [.accepted(1_000, try other(writing: 1))]))
        #expect(touching.retries == 1 && touching.accepted == 1)
        // Not touching: saved at once.
        let apart = try save(try graphEditingLabelOne(store), store, Mailbox(waiting: [.accepted(1_000, try other(writing: 2))]))
        #expect(apart.retries == 0 && apart.accepted == 1)
        try await store.close()
    }

    @Test func aChangeSetAcceptedAfterTheSaveLookedIsCheckedUnderTheLock() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("touches.sqlite"), entities: [Jot.self, Badge.self])
        // Arriving between the first look and the lock: found under the lock, the save retries.
        let touching = try save(try graphEditingLabelOne(store), store,
                                Mailbox(waiting: [.accepted(1_000, try other(writing: 2))],
                                        arriving: [.accepted(1_001, try other(writing: 1))]))
        #expect(touching.retries == 1 && touching.accepted == 1)
        let apart = try save(try graphEditingLabelOne(store), store,
                             Mailbox(waiting: [], arriving: [.accepted(1_001, try other(writing: 3))]))
        #expect(apart.retries == 0 && apart.accepted == 1)
        try await store.close()
    }
}
