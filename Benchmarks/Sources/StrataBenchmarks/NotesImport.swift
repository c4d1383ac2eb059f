import Foundation
import Strata

/// P4c's measurements, in milliseconds.
struct NotesImportSamples: Sendable {
    /// Each main-actor job in which the main context merged (``MainContext/onMainActorWork``),
    /// and how many change sets it merged.
    var jobs: [Double] = []
    var jobChangeSets: [Int] = []
    /// How late a 1 ms main-actor timer (`Task.sleep`) fired, from the first save until
    /// everything was merged. Its wake-up is a job on Swift's global executor, which then hops
    /// to the main actor: it waits for a thread of the global pool as well as for the main actor.
    var lateness: [Double] = []
    /// How late a 1 ms timer on the main dispatch queue fired meanwhile: it waits only for the
    /// main thread.
    var mainQueueLateness: [Double] = []
    /// For each diff the live query's `diffs()` consumer received: from the merge that produced
    /// it (the main context's change observer, called in the same main-actor job as the live
    /// query's update) to the consumer receiving it.
    var diffDelays: [Double] = []
    /// Diffs received, and those received after the last worker's last save had returned.
    var diffs = 0
    var diffsAfterSaves = 0
    /// How many different result sizes the timer saw in `values` (it grows with each note save).
    var valueSteps = 0
    /// From the first save to the last one returning, and to everything merged and the last
    /// diff received (committing to disk is not waited for).
    var saving: Duration = .zero
    var merged: Duration = .zero
}

/// Collects P4c's figures on the main actor.
@MainActor
private final class NotesRecorder {
    var samples = NotesImportSamples()
    var isTicking = true
    /// When the merge that published each sequence touching notes ran.
    var mergedAt: [UInt64: ContinuousClock.Instant] = [:]
    var savesReturned: ContinuousClock.Instant?
    var delivered = 0
    var lastDelivered: UInt64 = 0
    var lastValuesCount = -1

    /// Whether the consumer has received the diff of the last merge that touched notes.
    var hasLastDiff: Bool { mergedAt.keys.max().map { lastDelivered >= $0 } ?? false }

    func merged(_ change: ContextChange) {
        if change.touches(Note.self) { mergedAt[change.sequence] = ContinuousClock.now }
    }

    func received(_ diff: LiveQueryDiff<String>) {
        let now = ContinuousClock.now
        delivered += 1
        lastDelivered = max(lastDelivered, diff.sequence)
        if let merged = mergedAt[diff.sequence] { samples.diffDelays.append((now - merged).milliseconds) }
        if let savesReturned, now > savesReturned { samples.diffsAfterSaves += 1 }
    }

    private var lastTick: ContinuousClock.Instant?

    /// A tick of the main-queue timer.
    func tick() {
        let now = ContinuousClock.now
        if let lastTick { samples.mainQueueLateness.append(max(0, (now - lastTick).milliseconds - 1)) }
        lastTick = now
    }

    func sample(_ values: Int) {
        if values != lastValuesCount {
            lastValuesCount = values
            samples.valueSteps += 1
        }
    }
}

extension LatencyScenarios {
    /// P4c: a fresh store of the notes shape, its main context loaded and a live query open (the
    /// shown notebook's notes, newest first) whose `diffs()` a main-actor task consumes, reading
    /// `values` with each; then six workers import at once — four save notes, two save links —
    /// while a 1 ms timer ticks on the main actor, until the main context has merged everything
    /// and the consumer has the last diff.
    static func notesImport(_ shape: NotesShape, directory: String) async throws -> NotesImportSamples {
        let store = try await Store.open(at: directory + "/notes.sqlite", entities: NotesShape.entities,
                                         configuration: StrataPeer.configuration)
        let setup = store.makeWorkerContext(name: "setup")
        try await setup.perform { worker in
            for notebook in shape.notebooks { try worker.insert(notebook) }
            for tag in shape.tags { try worker.insert(tag) }
            try worker.save()
        }
        try await store.persist()
        let main = store.mainContext
        try await main.loadResidentEntities()
        guard main.registeredCount(Tag.self) == shape.tags.count else { throw BenchmarkError("P4c: the tags are not loaded") }

        let recorder = NotesRecorder()
        let live = try main.observe(NotesShape.shownNotes)
        let diffs = live.diffs()
        let consumer = Task { @MainActor in
            for await diff in diffs {
                recorder.received(diff)
                if live.values.count != live.ids.count { throw BenchmarkError("P4c: values and IDs disagree") }
            }
        }
        let observation = main.onChange { recorder.merged($0) }
        main.onMainActorWork = { work in
            recorder.samples.jobs.append(work.duration.milliseconds)
            recorder.samples.jobChangeSets.append(work.changeSets)
        }
        let ticker = Task { @MainActor in
            while recorder.isTicking {
                recorder.samples.lateness.append(try await timerLateness())
                recorder.sample(live.values.count)
            }
        }

        // The same 1 ms period on the main queue itself: its ticks wait only for the main thread.
        let mainQueueTimer = DispatchSource.makeTimerSource(queue: .main)
        mainQueueTimer.schedule(deadline: .now(), repeating: .milliseconds(1))
        mainQueueTimer.setEventHandler { MainActor.assumeIsolated { recorder.tick() } }
        mainQueueTimer.resume()
        // Under callgrind: every thread's work from the first save to everything merged and received.
        let region = Region("P4c", .strata, objects: shape.noteCount + shape.linkCount)
        region.begin()
        let start = ContinuousClock.now
        try await importConcurrently(shape, into: store)
        recorder.savesReturned = ContinuousClock.now
        recorder.samples.saving = ContinuousClock.now - start
        let deadline = ContinuousClock.now + .seconds(120)
        while main.registeredCount(Note.self) < shape.noteCount || live.values.count < shape.shownCount
                || !recorder.hasLastDiff {
            guard ContinuousClock.now < deadline else {
                throw BenchmarkError("P4c: after 120 s the main context holds \(main.registeredCount(Note.self)) of "
                                     + "\(shape.noteCount) notes, the live query \(live.values.count) of \(shape.shownCount), "
                                     + "and \(recorder.delivered) diffs were received")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        recorder.samples.merged = ContinuousClock.now - start
        region.end()
        recorder.samples.diffs = recorder.delivered

        mainQueueTimer.cancel()
        recorder.isTicking = false
        try await ticker.value
        main.onMainActorWork = nil
        observation.cancel()
        live.cancel()
        try await consumer.value
        guard live.values.map(\.id) == live.ids, live.values.allSatisfy({ $0.notebookID == NotesShape.shownNotebook }),
              zip(live.values, live.values.dropFirst()).allSatisfy({ $0.modified >= $1.modified }) else {
            throw BenchmarkError("P4c: the live query's values are not the shown notebook's notes, newest first")
        }
        try await store.persist()
        guard main.registeredCount(NoteTag.self) == 0 else {
            throw BenchmarkError("P4c: the main context keeps \(main.registeredCount(NoteTag.self)) links (.notKept)")
        }
        try await store.close()
        return recorder.samples
    }

    /// The six workers, each saving its batches in turn, all at once; returns when every save
    /// has returned (accepted by the store, not yet committed). The workers' tasks run at the
    /// caller's priority, off the main actor.
    nonisolated private static func importConcurrently(_ shape: NotesShape, into store: Store) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, saves) in shape.noteSaves.enumerated() {
                group.addTask { try await save(saves, into: store.makeWorkerContext(name: "notes-\(index)")) }
            }
            for (index, saves) in shape.linkSaves.enumerated() {
                group.addTask { try await save(saves, into: store.makeWorkerContext(name: "links-\(index)")) }
            }
            try await group.waitForAll()
        }
    }

    nonisolated private static func save<E: Entity>(_ batches: [[E]], into worker: WorkerContext) async throws {
        for batch in batches {
            try await worker.perform { worker in
                for object in batch { try worker.insert(object) }
                guard try worker.save() != nil else { throw BenchmarkError("P4c: a save saved nothing") }
            }
        }
    }
}
