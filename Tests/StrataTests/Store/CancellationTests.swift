import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Cancelling a fetch or a read stops its SQL (`sqlite3_interrupt`) or skips it, and never
/// interrupts anything else on the store's queue.
@Suite struct CancellationTests {
    /// A query that runs for tens of seconds: an interrupt must stop it long before it returns
    /// (a result instead of `CancellationError` fails the test, so a lost cancellation cannot hang it).
    static let endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000000) SELECT count(*) FROM c"

    @Test func cancellingARunningReadInterruptsItsSQL() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let running = DispatchSemaphore(value: 0)
        let read = Task {
            try await store.read { db -> DatabaseValue? in
                running.signal()
                return try db.value(Self.endless)
            }
        }
        try #require(await waitOff(running), "the read never started")
        // Submitted while the endless read runs: queued behind it, committed after it stops.
        var changes = ChangeSet()
        changes.insert(Article.make(1))
        let submission = try store.submit(changes)
        read.cancel()
        let outcome = await read.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        try await withWatchdog { try await submission.committed() }
        #expect(try await store.fetch(Article.self, id: "article-1") != nil)
        #expect(try await store.integrityProblems().isEmpty)
    }

    @Test func cancellingAQueuedFetchSkipsIt() async throws {
        let directory = try TemporaryDirectory()
        let log = StatementLog()
        let store = try await openStore(directory.path("s.sqlite"), log: log)
        let gate = QueueGate()
        let blocker = Task { try await store.write { _ in gate.hold() } }
        try #require(await waitOff(gate.entered), "the store's queue never ran the blocking write")
        log.clear()
        let fetch = Task { try await store.fetch(Query<Article>()) }
        fetch.cancel()
        gate.release()
        #expect(try await blocker.value)
        let outcome = await fetch.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        try await store.persist()
        #expect(!log.statements.contains { $0.contains("FROM \"Article\"") }, "the cancelled fetch ran: \(log.statements)")
    }

    @Test @MainActor func cancellingAMainContextFetchRegistersNothing() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var changes = ChangeSet()
        for index in 0..<10 { changes.insert(Article.make(index)) }
        try await store.submit(changes).committed()
        let main = store.mainContext
        let gate = QueueGate()
        let blocker = Task { try await store.write { _ in gate.hold() } }
        try #require(await waitOff(gate.entered), "the store's queue never ran the blocking write")
        let fetch = Task { try await main.fetch(Query<Article>()) }
        fetch.cancel()
        gate.release()
        #expect(try await blocker.value)
        let outcome = await fetch.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(main.registeredCount(Article.self) == 0)
        // Not cancelled, the same fetch registers everything.
        #expect(try await main.fetch(Query<Article>()).count == 10)
        #expect(main.registeredCount(Article.self) == 10)
        try await store.close()
    }

    @Test func cancelledFetchesNeverInterruptACommit() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let failures = store.failures()
        var submissions: [Submission] = []
        var cancelled = 0
        for index in 0..<300 {
            var changes = ChangeSet()
            changes.insert(Article.make(index))
            submissions.append(try store.submit(changes))
            // A fetch queued right behind the commit, cancelled at once: its interrupt may fire
            // while the commit runs, which must not disturb it.
            let fetch = Task { try await store.count(Query<Article>(where: Attribute("title").contains("7"))) }
            if index % 3 != 2 { await Task.yield() }
            fetch.cancel()
            if case .failure(let error) = await fetch.result {
                #expect(error is CancellationError, "a cancelled fetch failed with \(error)")
                cancelled += 1
            }
        }
        for submission in submissions { try await submission.committed() }
        #expect(try await store.count(Query<Article>()) == 300)
        // A failure is published before its waiters resume: had a commit failed, it would be buffered.
        #expect(await next(failures, within: 0.2) == nil, "a commit failed")
        #expect(try await store.integrityProblems().isEmpty)
        print("[Cancellation] 300 commits, \(cancelled) fetches cancelled between and around them, 0 commits disturbed")
    }
}
