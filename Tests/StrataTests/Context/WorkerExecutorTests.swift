import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Workers run on serial queues of their own, not on Swift's global concurrent pool: however many
/// are busy, the tasks that resume on that pool — a main-actor task's continuation, a
/// `Task.sleep`, a live query's `diffs()` consumer — are not kept waiting for them.
@Suite struct WorkerExecutorTests {
    /// As many workers as the pool has threads, each blocked in `perform` until `release` is
    /// signalled (or, as a bound, for 20 s). Returns once all of them run, and when the last
    /// one started.
    private func busyWorkers(_ store: Store, release: DispatchSemaphore) async -> (tasks: [Task<Void, Never>], started: ContinuousClock.Instant)? {
        let count = ProcessInfo.processInfo.activeProcessorCount
        let started = DispatchSemaphore(value: 0)
        let lastStart = Locked(ContinuousClock.now)
        let tasks = (0..<count).map { index in
            let worker = store.makeWorkerContext(name: "busy-\(index)")
            return Task.detached {
                await worker.perform { _ in
                    lastStart.withLock { $0 = ContinuousClock.now }
                    started.signal()
                    _ = release.wait(timeout: .now() + 20 * waitScale)
                }
            }
        }
        for _ in 0..<count {
            guard await waitOff(started, seconds: 20) else { return nil }
        }
        return (tasks, lastStart.withLock { $0 })
    }

    @Test(.hangWatchdog)
    func busyWorkersLeaveTheGlobalPoolFree() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        let release = DispatchSemaphore(value: 0)
        let busy = try #require(await busyWorkers(store, release: release), "the workers never all started")
        // A job on the global pool runs now, not when the workers are done (a bound: 20 s).
        let ran = await Task.detached { ContinuousClock.now }.value
        // Scaled under a sanitizer; the workers hold their threads twice as long.
        #expect(ran - busy.started < .seconds(10) * waitScale, "a global-pool job waited for the busy workers")
        for _ in busy.tasks { release.signal() }
        for task in busy.tasks { await task.value }
        try await store.close()
    }

    @Test(.hangWatchdog) @MainActor
    func aDiffReachesItsConsumerWhileWorkersAreBusy() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self])
        let main = store.mainContext
        try await main.loadResidentEntities()
        let live = try main.observe(Query<ResidentArticle>(sortedBy: [Attribute("published").descending]))
        let received = DispatchSemaphore(value: 0)
        let receivedAt = Locked<ContinuousClock.Instant?>(nil)
        let consumer = Task { @MainActor in
            for await diff in live.diffs() where diff.difference.insertions.count == 10 {
                receivedAt.withLock { $0 = ContinuousClock.now }
                received.signal()
            }
        }
        let release = DispatchSemaphore(value: 0)
        let busy = try #require(await busyWorkers(store, release: release), "the workers never all started")
        // Another worker saves; the main context merges it on the main actor and the consumer,
        // a main-actor task, gets its diff while the others are still busy.
        let importer = store.makeWorkerContext(name: "import")
        try await importer.perform { worker in
            for index in 0..<10 { try worker.insert(ResidentArticle(index)) }
            try worker.save()
        }
        #expect(await waitOff(received, seconds: 30), "the diff never reached its consumer")
        let delivered = try #require(receivedAt.withLock { $0 })
        #expect(delivered - busy.started < .seconds(10) * waitScale, "the diff waited for the busy workers")
        #expect(live.ids.count == 10)
        for _ in busy.tasks { release.signal() }
        for task in busy.tasks { await task.value }
        live.cancel()
        await consumer.value
        try await store.close()
    }
}
