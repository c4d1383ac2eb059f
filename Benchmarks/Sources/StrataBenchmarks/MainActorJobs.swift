import Foundation
import Strata

/// P4b's measurements, in milliseconds: the main-actor jobs in which the main context merged
/// (``MainContext/onMainActorWork``: Strata's own time) and a 1 ms timer's lateness, during the
/// import and during the `updateAll`.
struct MainActorJobSamples: Sendable {
    var importJobs: [Double] = []
    var updateJobs: [Double] = []
    var importLateness: [Double] = []
    var updateLateness: [Double] = []
    /// The whole `updateAll(ids:set:)` call on the main actor (the hook times the merge in it).
    var updateCall: Duration = .zero
}

/// Files each job and each timer reading under the phase it ended in.
@MainActor
private final class JobRecorder {
    var samples = MainActorJobSamples()
    var isUpdating = false
    var isTicking = true

    func record(_ work: MainActorWork) {
        if isUpdating { samples.updateJobs.append(work.duration.milliseconds) } else { samples.importJobs.append(work.duration.milliseconds) }
    }

    func recordLateness(_ lateness: Double) {
        if isUpdating { samples.updateLateness.append(lateness) } else { samples.importLateness.append(lateness) }
    }
}

extension LatencyScenarios {
    /// P4b: a fresh store with a loaded main context imports `batches` through a worker (its
    /// main context merging every save), then the main context marks `ids` read with one
    /// `updateAll` and waits for the commit; a 1 ms timer ticks on the main actor throughout.
    static func mainActorJobs(_ batches: [[Article]], markRead ids: [String], directory: String) async throws -> MainActorJobSamples {
        let store = try await StrataPeer.open(directory + "/strata.sqlite")
        let main = store.mainContext
        try await main.loadResidentEntities()
        let recorder = JobRecorder()
        main.onMainActorWork = { recorder.record($0) }
        let ticker = Task { @MainActor in
            while recorder.isTicking { recorder.recordLateness(try await timerLateness()) }
        }

        try await StrataPeer.importThroughWorker(batches, into: store)
        let total = batches.reduce(0) { $0 + $1.count }
        let deadline = ContinuousClock.now + .seconds(120)
        while main.registeredCount(Article.self) < total {
            guard ContinuousClock.now < deadline else { throw BenchmarkError("P4b: the main context never merged the import") }
            try await Task.sleep(for: .milliseconds(1))
        }

        recorder.isUpdating = true
        let start = ContinuousClock.now
        let submission = try await main.updateAll(Article.self, ids: ids, set: ["isRead": true])
        recorder.samples.updateCall = ContinuousClock.now - start
        try await submission.committed()
        try await Task.sleep(for: .milliseconds(5))   // the timer's reading across the call, and any later merge

        recorder.isTicking = false
        try await ticker.value
        main.onMainActorWork = nil
        guard main.object(Article.self, id: ids[0])?.isRead == true else { throw BenchmarkError("P4b: the main context is not patched") }
        try await store.close()
        return recorder.samples
    }
}
