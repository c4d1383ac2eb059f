import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A small resident entity with attributes that filters and sorts can disagree on.
struct Note: Entity, Equatable {
    var id: Int64
    var group: Int
    var score: Double
    var label: String?
    var isDone: Bool

    static let isResident = true
    static let indexes = [EntityIndex(["group", "isDone"])]
}

@MainActor
@Suite struct LiveQueryPropertyTests {
    nonisolated static let seeds: [UInt64] = [1, 7, 42, 2026]

    /// With the default threshold only bulk updates by filter are merged off the main actor; with
    /// a threshold of one object every change set from elsewhere is.
    @Test(.hangWatchdog, arguments: seeds, [1_000, 1])
    func maintainedResultsEqualRerunningTheQuery(seed: UInt64, preparedMergeThreshold: Int) async throws {
        var random = SeededRandom(seed: seed)
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [Note.self])
        let main = store.mainContext
        main.preparedMergeThreshold = preparedMergeThreshold
        try await main.loadResidentEntities()

        let queries: [Query<Note>] = [
            Query(where: Attribute("isDone") == false, sortedBy: [Attribute("score").descending]),
            Query(where: Attribute("group") == 2, sortedBy: [Attribute("label").ascending]),
            Query(where: Attribute("group") == 1 && Attribute("isDone") == false, sortedBy: [Attribute("score").ascending], limit: 5),
            Query(where: Attribute("label").hasPrefix("b") || Attribute("score") > 50, sortedBy: [Attribute("group").ascending, Attribute("score").descending], limit: 7, offset: 2),
            Query(),
        ]
        let lives = try queries.map { try main.observe($0) }
        var iterators = lives.map { $0.diffs().makeAsyncIterator() }

        for step in 0..<150 {
            let before = lives.map { ($0.ids, $0.values) }
            let changes = randomChangeSet(&random, existing: main.objects(Note.self).map(\.id))
            if random.next() % 4 == 0 {
                // Through the main context's own save.
                for operation in changes { try apply(operation, to: main) }
                try main.save()
            } else {
                var set = ChangeSet()
                for operation in changes { operation.add(to: &set) }
                try store.submit(set)
                await main.mergeAccepted()
            }
            for (index, live) in lives.enumerated() {
                let rerun = try main.objects(matching: queries[index])
                #expect(live.values == rerun, "seed \(seed) step \(step) query \(index): maintained ≠ re-run")
                #expect(live.ids == rerun.map(\.id))
                if before[index].0 != live.ids || before[index].1 != live.values {
                    var iterator = iterators[index]
                    let next = await iterator.next(isolation: #isolation)
                    iterators[index] = iterator
                    let diff = try #require(next)
                    #expect(before[index].0.applying(diff.difference) == live.ids,
                            "seed \(seed) step \(step) query \(index): the diff does not turn old into new")
                    for id in diff.updated { #expect(live.ids.contains(id) && before[index].0.contains(id)) }
                }
            }
        }
        try await store.persist()
        let stored = try await store.fetch(Query<Note>())
        #expect(stored == main.objects(Note.self), "seed \(seed): main context and store disagree")
        try await store.close()
    }

    enum Operation {
        case upsert(Note)
        case delete(Int64)
        case bulkDone([Int64], Bool)
        case bulkScore(group: Int, score: Double)

        func add(to set: inout ChangeSet) {
            switch self {
            case .upsert(let note): set.upsert(note)
            case .delete(let id): set.delete(Note.self, id: id)
            case .bulkDone(let ids, let done): set.updateAll(Note.self, ids: ids, set: ["isDone": done])
            case .bulkScore(let group, let score): set.updateAll(Note.self, where: Attribute("group") == group, set: ["score": score])
            }
        }
    }

    private func apply(_ operation: Operation, to main: MainContext) throws {
        switch operation {
        case .upsert(let note):
            if main.object(Note.self, id: note.id) != nil { try main.update(note) } else { try main.insert(note) }
        case .delete(let id): try main.delete(Note.self, id: id)
        case .bulkDone(let ids, let done):
            for id in ids { if var note = main.object(Note.self, id: id) { note.isDone = done; try main.update(note) } }
        case .bulkScore(let group, let score):
            for var note in try main.objects(matching: Query<Note>(where: Attribute("group") == group)) {
                note.score = score
                try main.update(note)
            }
        }
    }

    private func randomChangeSet(_ random: inout SeededRandom, existing: [Int64]) -> [Operation] {
        let labels: [String?] = [nil, "a", "b", "ba", "bb", "c", "B"]
        func note(_ id: Int64) -> Note {
            Note(id: id, group: Int(random.next() % 4), score: Double(random.next() % 100) - 10,
                 label: labels[Int(random.next() % UInt64(labels.count))], isDone: random.next() % 3 == 0)
        }
        var operations: [Operation] = []
        for _ in 0..<(1 + random.next() % 6) {
            switch random.next() % 10 {
            case 0...4: operations.append(.upsert(note(Int64(random.next() % 60))))
            case 5, 6: if let id = existing.randomElement(using: &random) { operations.append(.delete(id)) }
            case 7, 8:
                let ids = (0..<(random.next() % 8)).compactMap { _ in existing.randomElement(using: &random) }
                operations.append(.bulkDone(ids, random.next() % 2 == 0))
            default: operations.append(.bulkScore(group: Int(random.next() % 4), score: Double(random.next() % 100)))
            }
        }
        return operations
    }
}
