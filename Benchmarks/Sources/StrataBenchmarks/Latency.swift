import Foundation
import Strata

/// Latencies collected while a worker imports a data set and the root persists it (P3, P4).
struct LatencySamples: Sendable {
    /// The measured latencies, in milliseconds.
    var values: [Double] = []
    /// How late the main actor ran a 1 ms timer (P4): how long it was busy with other work.
    var mainActorStalls: [Double] = []
    /// How long the import took from its first save to persisted.
    var importDuration: Duration = .zero
    /// How many samples were taken after the import had persisted (to reach the minimum count).
    var samplesAfterImport = 0
    /// P3: how long each 10,000-object import save took to become visible on the main context.
    var importSaveToVisible: [Double] = []
    /// P3: the latencies of the probes saved while no import save was on its way to the main
    /// context (saved, not yet visible).
    var valuesNotBehindImport: [Double] = []
}

/// Records when the main context sees a probe's change set (P3), by store sequence.
@MainActor
private final class VisibilityTracker {
    private var seen: [UInt64: ContinuousClock.Instant] = [:]
    private var waiting: [UInt64: CheckedContinuation<ContinuousClock.Instant, Never>] = [:]
    /// When each import save became visible, by sequence.
    private(set) var importVisible: [UInt64: ContinuousClock.Instant] = [:]

    func observe(_ change: ContextChange) {
        let now = ContinuousClock.now
        if change.origin == .context("import") { importVisible[change.sequence] = now }
        guard change.origin == .context("probe") else { return }
        if let continuation = waiting.removeValue(forKey: change.sequence) {
            continuation.resume(returning: now)
        } else {
            seen[change.sequence] = now
        }
    }

    func visible(_ sequence: UInt64) async -> ContinuousClock.Instant {
        if let instant = seen.removeValue(forKey: sequence) { return instant }
        return await withCheckedContinuation { waiting[sequence] = $0 }
    }
}

@MainActor
private final class Flag {
    var isSet = false
}

@MainActor
enum LatencyScenarios {
    /// Opens a fresh store with a loaded main context and starts importing `batches` through a
    /// worker; `probe` runs repeatedly on the main actor until the import has persisted (and at
    /// least `minimumSamples` times).
    private static func whileImporting(
        _ batches: [[Article]], directory: String, minimumSamples: Int,
        probe: (Store, MainContext, Int) async throws -> Void
    ) async throws -> (Duration, Int, Int, [(sequence: UInt64, saved: ContinuousClock.Instant)]) {
        let store = try await StrataPeer.open(directory + "/strata.sqlite")
        let main = store.mainContext
        try await main.loadResidentEntities()
        let finished = Flag()
        let start = ContinuousClock.now
        let importer = Task { @MainActor in
            defer { finished.isSet = true }
            let saves = try await StrataPeer.importThroughWorker(batches, into: store)
            return (ContinuousClock.now - start, saves)
        }
        var round = 0
        var afterImport = 0
        while !finished.isSet || round < minimumSamples {
            if finished.isSet { afterImport += 1 }
            try await probe(store, main, round)
            round += 1
        }
        let (duration, saves) = try await importer.value
        try await store.close()
        return (duration, round, afterImport, saves)
    }

    /// Sleeps 1 ms on the main actor and returns how late it woke, in milliseconds: how long
    /// other main-actor work held the main actor (plus the OS's scheduling).
    static func timerLateness() async throws -> Double {
        let start = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(1))
        return max(0, (ContinuousClock.now - start).milliseconds - 1)
    }

    /// P3: a worker saves 100 new objects; the latency is from just before `save()` to the main
    /// context's observer receiving the merged change.
    static func saveToVisible(_ batches: [[Article]], directory: String, minimumSamples: Int) async throws -> LatencySamples {
        let tracker = VisibilityTracker()
        var samples = LatencySamples()
        var observation: ChangeObservation?
        var worker: WorkerContext?
        var probes: [(saved: ContinuousClock.Instant, visible: ContinuousClock.Instant)] = []
        let (duration, _, after, saves) = try await whileImporting(batches, directory: directory, minimumSamples: minimumSamples) {
            store, main, round in
            if observation == nil {
                observation = main.onChange { tracker.observe($0) }
                worker = store.makeWorkerContext(name: "probe")
            }
            let objects = DataSet.probeArticles(round: round).map(Article.init)
            let (start, sequence) = try await worker!.perform { worker -> (ContinuousClock.Instant, UInt64) in
                for object in objects { try worker.insert(object) }
                let start = ContinuousClock.now
                guard let submission = try worker.save() else { throw BenchmarkError("probe saved nothing") }
                return (start, submission.sequence)
            }
            let visible = await tracker.visible(sequence)
            samples.values.append((visible - start).milliseconds)
            probes.append((start, visible))
            try await Task.sleep(for: .milliseconds(2))
        }
        observation?.cancel()
        // An import save is on its way from its `save()` until the main context shows it; a probe
        // saved meanwhile is merged after it, in store order.
        let windows = saves.compactMap { save in tracker.importVisible[save.sequence].map { (save.saved, $0) } }
        guard windows.count == saves.count else { throw BenchmarkError("P3: an import save never became visible") }
        samples.importSaveToVisible = windows.map { ($1 - $0).milliseconds }
        samples.valuesNotBehindImport = probes.filter { probe in
            !windows.contains { probe.saved < $0.1 && probe.visible > $0.0 }
        }.map { ($0.visible - $0.saved).milliseconds }
        samples.importDuration = duration
        samples.samplesAfterImport = after
        return samples
    }

    /// What P3 cannot beat on this machine: how late a 1 ms main-actor timer fires while the same
    /// import runs with no main context open (nothing merged, nothing published): a probe's
    /// change becomes visible in a main-actor job, which waits as long for a core.
    static func latenessWithoutMainContext(_ batches: [[Article]], directory: String, minimumSamples: Int) async throws -> [Double] {
        let store = try await StrataPeer.open(directory + "/strata.sqlite")
        let finished = Flag()
        let importer = Task { @MainActor in
            defer { finished.isSet = true }
            try await StrataPeer.importThroughWorker(batches, into: store)
        }
        var lateness: [Double] = []
        while !finished.isSet || lateness.count < minimumSamples {
            lateness.append(try await timerLateness())
            if finished.isSet && lateness.count >= minimumSamples { break }
        }
        try await importer.value
        try await store.close()
        return lateness
    }

    /// P4: a read a screen makes ("unread of feed F, newest first, first 50") on the main
    /// context, every millisecond; the latency is the read call itself. The main actor's
    /// stalls (how late the 1 ms timer fired, i.e. how long merges of the import's change sets
    /// held the main actor) are recorded separately.
    static func readLatency(_ batches: [[Article]], directory: String, minimumSamples: Int) async throws -> LatencySamples {
        var samples = LatencySamples()
        let (duration, _, after, _) = try await whileImporting(batches, directory: directory, minimumSamples: minimumSamples) {
            _, main, round in
            let query = StrataPeer.unreadQuery(feed: Int64(round) % DataSet.feeds, newest: true)
            let start = ContinuousClock.now
            let result = try main.objects(matching: query)
            samples.values.append((ContinuousClock.now - start).milliseconds)
            precondition(result.count <= 50)
            samples.mainActorStalls.append(try await timerLateness())
        }
        samples.importDuration = duration
        samples.samplesAfterImport = after
        return samples
    }
}
