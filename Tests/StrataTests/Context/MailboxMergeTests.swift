import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Small change sets that wait together in the main context's mailbox are merged in place a few
/// per main-actor job, within ``MainContext/preparedMergeThreshold`` objects together
/// (`MainContext+Mailbox`), in order, each published on its own.
@MainActor
@Suite struct MailboxMergeTests {
    @Test(.hangWatchdog)
    func smallChangeSetsWaitingTogetherAreMergedAFewPerJob() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        let main = store.mainContext
        try await main.loadResidentEntities()
        main.preparedMergeThreshold = 1_000
        var jobs: [MainActorWork] = []
        main.onMainActorWork = { jobs.append($0) }
        var published: [UInt64] = []
        let observation = main.onChange { published.append($0.sequence) }
        defer { observation.cancel() }
        let live = try main.observe(Query<ResidentArticle>(sortedBy: [Attribute("published").descending], limit: 20))
        var diffs: [UInt64] = []
        let stream = live.diffs()
        let consumer = Task { @MainActor in
            for await diff in stream { diffs.append(diff.sequence) }
        }

        // Ten change sets of 300 objects, all accepted while the main actor is held here (the
        // worker never needs it): they wait in the mailbox together.
        let saves = 10, perSave = 300
        let worker = store.makeWorkerContext(name: "import")
        let accepted = DispatchSemaphore(value: 0)
        let failure = Locked<(any Error)?>(nil)
        Task.detached {
            do {
                for save in 0..<saves {
                    try await worker.perform { worker in
                        for index in save * perSave..<(save + 1) * perSave { try worker.insert(ResidentArticle(index)) }
                        try worker.save()
                    }
                }
            } catch {
                failure.withLock { $0 = error }
            }
            accepted.signal()
        }
        #expect(accepted.wait(timeout: .now() + 60 * waitScale) == .success)
        try failure.withLock { if let error = $0 { throw error } }
        await main.mergeAccepted()

        // Three of 300 reach 900; a fourth would pass 1,000: it waits for the next job.
        print("jobs: \(jobs.map(\.changeSets))")
        #expect(jobs.map(\.changeSets).reduce(0, +) == saves)
        #expect(jobs.allSatisfy { $0.changeSets <= 3 }, "change sets per job: \(jobs.map(\.changeSets))")
        #expect(jobs.count >= 4)
        #expect(published.count == saves)
        #expect(published == published.sorted())
        #expect(main.registeredCount(ResidentArticle.self) == saves * perSave)
        let newest = (0..<saves * perSave).reversed().prefix(20).map { "r-\($0)" }
        #expect(live.ids == newest)

        // Each change set moved the window (each saves newer articles): one diff each, in order.
        live.cancel()
        await consumer.value
        #expect(diffs == published)
        try await store.close()
    }
}
