import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The store owns its main context from its first use to `close()`: dropping every other
/// reference loses nothing, a warm start's filled context is the store's, and closing ends the
/// store and context holding each other.
@MainActor
@Suite struct MainContextLifetimeTests {
    private static let feeds = (1...25).map { Feed(id: Int64($0), name: "Feed \($0)") }

    private func seeded(_ path: String) async throws -> Store {
        let store = try await openStore(path)
        var changes = ChangeSet()
        for feed in Self.feeds { changes.insert(feed) }
        try store.submit(changes)
        try await store.persist()
        return store
    }

    @Test func aLoadedContextSurvivesDroppingEveryReferenceToIt() async throws {
        let directory = try TemporaryDirectory()
        let store = try await seeded(directory.path("s.sqlite"))
        try await store.mainContext.loadResidentEntities()
        let first = ObjectIdentifier(store.mainContext)
        // No reference to the context is kept here: the store's is the only one.
        #expect(store.mainContext.registeredCount(Feed.self) == Self.feeds.count)
        #expect(store.mainContext.objects(Feed.self) == Self.feeds)
        #expect(ObjectIdentifier(store.mainContext) == first)
        try await store.close()
    }

    @Test func aWarmStartKeepingOnlyTheStoreKeepsItsFilledContext() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite"), snapshot = directory.path("s.snapshot")
        let writer = try await seeded(path)
        try await writer.mainContext.loadResidentEntities()
        try await writer.mainContext.writeSnapshot(to: snapshot)
        try await writer.close()

        let store = try await Store.openWarm(at: path, snapshot: snapshot, entities: [Article.self, Feed.self]).store
        #expect(store.mainContext.registeredCount(Feed.self) == Self.feeds.count)
        #expect(store.mainContext.objects(Feed.self) == Self.feeds)
        try await store.close()
    }

    @Test func closingLetsTheStoreAndItsContextGo() async throws {
        let directory = try TemporaryDirectory()
        weak var weakStore: Store?
        weak var weakMain: MainContext?
        do {
            let store = try await seeded(directory.path("s.sqlite"))
            try await store.mainContext.loadResidentEntities()
            weakStore = store
            weakMain = store.mainContext
            #expect(weakMain != nil, "owned by the store while it is open")
            try await store.close()
        }
        // The context's merge jobs and the store's queue may still hold them for a moment.
        let released = await eventually { weakStore == nil && weakMain == nil }
        #expect(released, "a closed store and its main context are freed once nothing else holds them")
    }

    @Test func aClosedStoreStillAnswersWithTheContextTheAppHolds() async throws {
        let directory = try TemporaryDirectory()
        let store = try await seeded(directory.path("s.sqlite"))
        let main = store.mainContext
        try await main.loadResidentEntities()
        try await store.close()
        #expect(store.mainContext === main)
        #expect(main.registeredCount(Feed.self) == Self.feeds.count)
    }

    /// Workers on other threads submit (each submission reads the slot) while the main actor asks
    /// for the context again and again: one context, and no race (this suite runs under TSan).
    @Test func threadsSubmittingWhileTheMainActorAsksForTheContextSeeOneContext() async throws {
        let directory = try TemporaryDirectory()
        let store = try await seeded(directory.path("s.sqlite"))
        let first = ObjectIdentifier(store.mainContext)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    for index in 0..<20 {
                        var changes = ChangeSet()
                        changes.upsert(Article.make(thread * 100 + index))
                        try store.submit(changes)
                    }
                }
            }
            for _ in 0..<200 {
                #expect(ObjectIdentifier(store.mainContext) == first)
                await Task.yield()
            }
            try await group.waitForAll()
        }
        try await store.persist()
        await store.mainContext.mergeAccepted()
        #expect(store.mainContext.registeredCount(Article.self) == 160)
        try await store.close()
    }

    /// Yields to other jobs until `condition` holds, for at most 10 s (×`STRATA_TEST_WAIT_SCALE`):
    /// a hang detector, not a delay — it returns as soon as the condition holds.
    private func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10 * waitScale)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            await Task.yield()
        }
        return condition()
    }
}
