import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A merge takes a change set run by run of one entity's operations: saves of new keys are
/// written at once into slots given out in bulk and posted to the indexes together, before any
/// other operation of the run (`EntityTable.merge(_:run:…)`). These tests mix new keys with
/// everything that must see them posted: an update or a deletion of a key inserted earlier in the
/// same change set, a bulk update, a key inserted again after its deletion.
@MainActor
@Suite struct RunMergeTests {
    /// Seeded rounds of one change set each, merged off the main actor (threshold 2) or in place;
    /// after each, every index query the main context answers equals the plain model and SQL,
    /// the change lists exactly the keys new to the context, and no empty slot is left behind.
    @Test(.hangWatchdog, arguments: [2, 1_000_000])
    func newRowsMixedWithOtherOperationsAreIndexedAsTheStoreHasThem(threshold: Int) async throws {
        var (random, seed) = SeededRandom.forTest("newRowsMixedWithOtherOperationsAreIndexedAsTheStoreHasThem \(threshold)")
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [Note.self])
        let main = store.mainContext
        main.preparedMergeThreshold = threshold
        try await main.loadResidentEntities()
        var changes: [ContextChange] = []
        let observation = main.onChange { changes.append($0) }
        defer { observation.cancel() }
        var model: [Int64: Note] = [:]
        func note(_ id: Int64) -> Note {
            Note(id: id, group: random.next(3), score: Double(random.next(5)), label: random.next(2) == 0 ? nil : "l\(random.next(4))",
                 isDone: random.next(2) == 0)
        }
        for round in 0..<8 {
            let before = model
            var changeSet = ChangeSet()
            for _ in 0..<(20 + random.next(60)) {
                let id = Int64(random.next(90))
                switch random.next(6) {
                case 0, 1, 2:
                    let new = note(id)
                    if model[id] == nil { changeSet.insert(new) } else { changeSet.update(new) }
                    model[id] = new
                case 3:
                    guard model[id] != nil else { continue }
                    changeSet.delete(Note.self, id: id)
                    model[id] = nil
                case 4:
                    let ids = model.keys.filter { _ in random.next(4) == 0 }
                    let isDone = random.next(2) == 0
                    changeSet.updateAll(Note.self, ids: ids, set: ["isDone": isDone])
                    for id in ids { model[id]!.isDone = isDone }
                default:
                    let new = note(id)
                    changeSet.upsert(new)
                    model[id] = new
                }
            }
            let submission = try store.submit(changeSet)
            try await submission.committed()
            let sequence = submission.sequence
            await main.waitUntilMerged(through: sequence)
            let context = "seed \(seed), round \(round)"

            for group in 0..<3 {
                for isDone in [false, true] {
                    let query = Query<Note>(where: Attribute("group") == group && Attribute("isDone") == isDone)
                    let expected = model.values.filter { $0.group == group && $0.isDone == isDone }.map(\.id).sorted()
                    #expect(try main.count(matching: query) == expected.count, "\(context): count of \(group), \(isDone)")
                    #expect(try main.ids(matching: query).sorted() == expected, "\(context): ids of \(group), \(isDone)")
                    #expect(try await store.fetch(query).map(\.id).sorted() == expected, "\(context): SQL of \(group), \(isDone)")
                }
                let byGroup = Query<Note>(where: Attribute("group") == group)
                #expect(try main.ids(matching: byGroup).sorted() == model.values.filter { $0.group == group }.map(\.id).sorted(),
                        "\(context): ids of group \(group)")
            }
            #expect(main.objects(Note.self).sorted { $0.id < $1.id } == model.values.sorted { $0.id < $1.id }, "\(context): objects")
            let change = try #require(changes.last(where: { $0.sequence == sequence }), "\(context): no change published")
            #expect(change.inserted(Note.self) == Set(model.keys).subtracting(before.keys), "\(context): inserted")
            let replaced = Set(change.updated(Note.self).filter { $0.value == Set(["id", "group", "score", "label", "isDone"]) }.keys)
            #expect(replaced.isSubset(of: Set(before.keys).intersection(model.keys)), "\(context): replaced objects were held before and after")
            #expect(change.deleted(Note.self) == Set(before.keys).subtracting(model.keys), "\(context): deleted")
            // Live rows never exceed the 90 IDs; slots given out for updates and left unclaimed
            // would pile up past them if they were not dropped.
            let table = try #require(main.graph.tables[Note.entityName])
            #expect(table.saved.slotCount <= 90, "\(context): \(table.saved.slotCount) slots for \(table.saved.count) rows")
        }
        try await store.close()
    }

    /// An object deleted and inserted again in one change set was held before and after it: it is
    /// reported updated in every attribute, not inserted — and deleted when a third operation
    /// deletes it again (it used to vanish from the change). New objects that a later operation
    /// of the same run updates or deletes are posted to the index once, as they end up.
    @Test(.hangWatchdog)
    func aReinsertedObjectIsReplacedAndNewObjectsChangedInTheirRunArePostedOnce() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [Note.self])
        var seed = ChangeSet()
        for id: Int64 in 1...2 { seed.insert(Note(id: id, group: 1, score: 1, label: nil, isDone: false)) }
        try await store.submit(seed).committed()
        let main = store.mainContext
        try await main.loadResidentEntities()
        var changes: [ContextChange] = []
        let observation = main.onChange { changes.append($0) }
        defer { observation.cancel() }

        var changeSet = ChangeSet()
        changeSet.delete(Note.self, id: 1)
        changeSet.insert(Note(id: 1, group: 2, score: 1, label: nil, isDone: false))
        changeSet.delete(Note.self, id: 2)
        changeSet.insert(Note(id: 2, group: 2, score: 1, label: nil, isDone: false))
        changeSet.delete(Note.self, id: 2)
        // New objects, one updated and one deleted before the run ends: each posted once.
        for id: Int64 in 3...5 { changeSet.insert(Note(id: id, group: 5, score: 1, label: nil, isDone: false)) }
        changeSet.update(Note(id: 3, group: 6, score: 1, label: nil, isDone: false))
        changeSet.delete(Note.self, id: 4)
        let submission = try store.submit(changeSet)
        try await submission.committed()
        await main.waitUntilMerged(through: submission.sequence)

        let change = try #require(changes.last)
        #expect(change.inserted(Note.self) == [3, 5])
        #expect(change.updated(Note.self) == [1: ["id", "group", "score", "label", "isDone"]])
        #expect(change.deleted(Note.self) == [2])
        #expect(try main.ids(matching: Query<Note>(where: Attribute("group") == 2)) == [1])
        for (group, ids) in [(5, [5]), (6, [3])] as [(Int, [Int64])] {
            let query = Query<Note>(where: Attribute("group") == group)
            #expect(try main.count(matching: query) == ids.count, "group \(group)")
            #expect(try main.ids(matching: query) == ids, "group \(group)")
        }
        try await store.close()
    }
}
