import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A live query's `diffs()` under an import by several workers into several entities: each diff
/// reaches its consumer in order, soon after the merge that made it (not in a burst at the end),
/// and the diffs applied one after another give the query's result.
@MainActor
@Suite struct LiveQueryDiffStreamTests {
    /// How late a diff may reach its consumer after its merge: a bound that only turns a diff held
    /// back without end into a failure — in the whole suite, other tests hold the main actor for
    /// seconds at a time. The tight figure is the benchmark's (P4c: within 16 ms).
    static let generousDelay = Duration.seconds(10)

    @Test(.hangWatchdog)
    func diffsArriveInOrderAsTheyAreMergedDuringAMultiWorkerImport() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"), entities: [ResidentArticle.self, Feed.self])
        let main = store.mainContext
        try await main.loadResidentEntities()
        main.preparedMergeThreshold = 150   // some merges prepared off the main actor, some in place
        let live = try main.observe(Query<ResidentArticle>(where: Attribute("feedID") == 3,
                                                           sortedBy: [Attribute("published").descending]))
        var mergedAt: [UInt64: ContinuousClock.Instant] = [:]
        let observation = main.onChange { mergedAt[$0.sequence] = ContinuousClock.now }
        defer { observation.cancel() }

        let workers = 4, batches = 5, perBatch = 200
        let expected = (0..<(workers * batches * perBatch)).filter { ResidentArticle($0).feedID == 3 }.count
        var mirror: [String] = []
        var received: [(sequence: UInt64, at: ContinuousClock.Instant)] = []
        let done = DispatchSemaphore(value: 0)
        let consumer = Task { @MainActor in
            for await diff in live.diffs() {
                received.append((diff.sequence, ContinuousClock.now))
                mirror = mirror.applying(diff.difference) ?? ["the diff does not apply"]
                if mirror.count == expected { done.signal() }
            }
        }

        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<workers {
                let context = store.makeWorkerContext(name: "articles-\(worker)")
                group.addTask {
                    for batch in 0..<batches {
                        let first = (worker * batches + batch) * perBatch
                        try await context.perform { context in
                            for index in first..<first + perBatch { try context.insert(ResidentArticle(index)) }
                            try context.save()
                        }
                    }
                }
            }
            let feeds = store.makeWorkerContext(name: "feeds")
            group.addTask {
                for batch in 0..<batches {
                    try await feeds.perform { context in
                        for id in 0..<50 { try context.insert(Feed(id: Int64(batch * 50 + id), name: "feed \(batch)")) }
                        try context.save()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(await waitOff(done, seconds: 30), "the diffs never added up to the result: \(mirror.count) of \(expected)")

        #expect(mirror == live.ids, "the diffs, applied in order, are the result")
        #expect(received.count >= 2, "one diff for the whole import: a burst")
        #expect(zip(received, received.dropFirst()).allSatisfy { $0.sequence < $1.sequence }, "diffs out of order")
        for diff in received {
            let merged = try #require(mergedAt[diff.sequence], "a diff of sequence \(diff.sequence) with no merge")
            #expect(diff.at - merged < Self.generousDelay * waitScale,
                    "the diff of sequence \(diff.sequence) reached its consumer \(diff.at - merged) after its merge")
        }
        live.cancel()
        await consumer.value
        try await store.close()
    }
}
