import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// An object for the model-based test.
struct ModelItem: Entity, Equatable {
    var id: Int64
    var group: Int
    var value: Int
    var label: String?
    static let isResident = true
    static let indexes = [EntityIndex(["group"])]
}

/// Seeded random operations — inserts, updates, deletes, bulk updates, saves, rollbacks — across
/// the main context and several workers, compared after every merge and after reopening (warm
/// and cold) with a plain in-memory model. A failing seed is printed; replay one with
/// `STRATA_MODEL_SEED=<seed> swift test --filter ModelBasedTests`.
@MainActor
@Suite struct ModelBasedTests {
    static let sequences = 200

    static var seeds: [UInt64] {
        if let replay = ProcessInfo.processInfo.environment["STRATA_MODEL_SEED"].flatMap(UInt64.init) { return [replay] }
        return (1...UInt64(sequences)).map { $0 &* 0x9E37_79B9 }
    }

    @Test(.hangWatchdog)
    func randomOperationsMatchThePlainModel() async throws {
        var lost = 0
        for seed in Self.seeds {
            lost += try await run(seed: seed, reopen: seed % 4 == 0 || Self.seeds.count == 1)
        }
        print("model-based: \(Self.seeds.count) sequences, \(lost) diverged")
        #expect(lost == 0)
    }

    /// Returns 1 if the sequence diverged from the model.
    private func run(seed: UInt64, reopen: Bool) async throws -> Int {
        var random = SeededRandom(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.path("model.sqlite")
        let store = try await openStore(path, entities: [ModelItem.self])
        let main = store.mainContext
        // The model writes whole objects at a save: the contexts do under `.localWins` (the
        // attribute-level default has its own matrices: ConflictMatrixTests, OutsideWriteTests).
        main.mergePolicy = .localWins
        // Every other sequence merges every change set from elsewhere off the main actor, on a
        // copy of the main context's tables (as large ones are), while the sequence goes on editing.
        if seed % 2 == 0 { main.preparedMergeThreshold = 1 }
        let workers = (0..<3).map { store.makeWorkerContext(name: "w\($0)", mergePolicy: .localWins) }
        var model: [Int64: ModelItem] = [:]
        // What each context (0 = main, 1… = workers) will write when it saves: nil = delete.
        var unsaved: [[Int64: ModelItem?]] = Array(repeating: [:], count: workers.count + 1)
        var diverged = false
        func check(_ label: String) {
            guard unsaved[0].isEmpty else { return }
            let shown = main.objects(ModelItem.self)
            let expected = model.values.sorted { $0.id < $1.id }
            if shown != expected {
                diverged = true
                let difference = Set(shown.map(\.id)).symmetricDifference(expected.map(\.id)).sorted()
                let shownByID = Dictionary(uniqueKeysWithValues: shown.map { ($0.id, $0) })
                let changed = expected.filter { item in shownByID[item.id].map { $0 != item } ?? false }
                let details = changed.map { item in "model \(item) shown \(shownByID[item.id]!)" }
                Issue.record("seed \(seed): main context ≠ model after \(label): only in one: \(difference); differing: \(details)")
            }
        }
        let trace = ProcessInfo.processInfo.environment["STRATA_MODEL_TRACE"] != nil
        for step in 0..<40 {
            let context = random.next(workers.count + 1)
            let item = ModelItem(id: Int64(random.next(12)), group: random.next(3), value: random.next(1_000),
                                 label: random.next(3) == 0 ? nil : "l\(random.next(5))")
            let kind = random.next(10)
            if trace { print("step \(step) context \(context) op \(kind) item \(item)") }
            switch kind {
            case 0...3:   // insert or update what the context holds
                if context == 0 {
                    if main.object(ModelItem.self, id: item.id) != nil { try main.update(item) } else { try main.insert(item) }
                } else {
                    let worker = workers[context - 1]
                    if await worker.object(ModelItem.self, id: item.id) != nil { try await worker.update(item) }
                    else { try await worker.insert(item) }
                }
                unsaved[context][item.id] = .some(item)
            case 4:   // delete something the context holds from the store (not its own unsaved edit:
                      // deleting an unsaved insert only cancels it)
                guard unsaved[context][item.id] == nil else { break }
                if context == 0 {
                    guard main.object(ModelItem.self, id: item.id) != nil else { break }
                    try main.delete(ModelItem.self, id: item.id)
                } else {
                    let worker = workers[context - 1]
                    guard await worker.object(ModelItem.self, id: item.id) != nil else { break }
                    try await worker.delete(ModelItem.self, id: item.id)
                }
                unsaved[context][item.id] = .some(nil)
            case 5:   // a worker (re)fetches everything
                if context > 0 { _ = try await workers[context - 1].fetch(Query<ModelItem>()) }
            case 6:   // rollback
                if context == 0 { main.rollback() } else { await workers[context - 1].rollback() }
                unsaved[context] = [:]
            case 7:   // bulk update by filter, straight to the store
                let group = random.next(3), value = random.next(1_000)
                try store.updateAll(ModelItem.self, where: Attribute("group") == group, set: ["value": value])
                for (id, var object) in model where object.group == group {
                    object.value = value
                    model[id] = object
                }
                await main.mergeAccepted()
                check("bulk update at step \(step)")
            default:  // save
                if context == 0 { try main.save() } else { try await workers[context - 1].save() }
                for (id, object) in unsaved[context] { model[id] = object ?? nil }
                unsaved[context] = [:]
                await main.mergeAccepted()
                check("save at step \(step)")
            }
        }
        // Every context saves what is left, in this order; the model applies them in the same order.
        try main.save()
        for (id, object) in unsaved[0] { model[id] = object ?? nil }
        for (index, worker) in workers.enumerated() {
            try await worker.save()
            for (id, object) in unsaved[index + 1] { model[id] = object ?? nil }
        }
        unsaved = unsaved.map { _ in [:] }
        try await store.persist()
        await main.mergeAccepted()
        check("the final saves")
        let expected = model.values.sorted { $0.id < $1.id }
        if try await store.fetch(Query<ModelItem>()) != expected {
            diverged = true
            Issue.record("seed \(seed): the store ≠ model")
        }
        if reopen {
            try await main.writeSnapshot(to: directory.path("model.snapshot"))
            let warm = try await Store.openWarm(at: path, snapshot: directory.path("model.snapshot"), entities: [ModelItem.self])
            let cold = try await Store.openWarm(at: path, snapshot: directory.path("none"), entities: [ModelItem.self])
            if warm.mainContext.objects(ModelItem.self) != expected || cold.mainContext.objects(ModelItem.self) != expected {
                diverged = true
                Issue.record("seed \(seed): a reopened store ≠ model (warm \(warm.outcome))")
            }
            try await cold.store.close()
            try await warm.store.close()
        }
        try await store.close()
        return diverged ? 1 : 0
    }
}
