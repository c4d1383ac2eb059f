import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Every reentrant pattern the API allows finishes, and every forbidden one fails with a typed
/// error. The patterns run in a child process (`StrataProbe reentrancy`, see
/// Sources/StrataProbe/ReentrancyProbe.swift) under a timeout: a deadlock kills the child and
/// fails the test naming the pattern that hung, instead of hanging CI.
@MainActor
@Suite struct ReentrancyTests {
    static let allowed = [
        "worker-calls-itself-inside-perform", "nested-atomically-on-main", "submit-inside-write",
        "submit-inside-sql-function", "store-call-from-a-task-started-inside-write", "nested-savepoints-inside-write",
        "main-saves-inside-its-change-handler", "store-still-sound-after-refusals",
    ]
    static let refused: [(pattern: String, code: StrataError.Code, says: String)] = [
        ("commit-inside-write", .misuse, "transaction control"),
        ("begin-inside-read", .misuse, "transaction control"),
        ("savepoint-sql-inside-write", .misuse, "transaction control"),
        ("release-of-the-stores-savepoint", .misuse, "transaction control"),
        ("database-used-after-its-closure", .misuse, "after the closure"),
        ("save-inside-atomically-on-a-worker", .misuse, "inside atomically"),
        ("save-inside-atomically-on-main", .misuse, "inside atomically"),
        ("submit-after-close", .closed, "is closed"),
    ]

    @Test func everyPatternFinishesOrIsRefusedInAChildProcess() async throws {
        let directory = try TemporaryDirectory()
        let probe = try ProbeRun(["reentrancy", directory.url.path], showErrors: true)
        defer { probe.kill() }
        let status = await probe.exited(seconds: 120)
        let lines = probe.allLines
        if status == nil {
            let hung = lines.last { $0.hasPrefix("start ") }.map { String($0.dropFirst(6)) } ?? "before the first pattern"
            Issue.record("deadlock: the probe did not finish within 120 s; it hung in \(hung)")
            return
        }
        #expect(status.flatMap(ProbeRun.exitCode) == 0, "probe wait status \(status ?? -1): \(lines)")
        #expect(lines.last == "done", "\(lines)")
        #expect(!lines.contains { $0.hasPrefix("wrong ") || $0.hasPrefix("error ") },
                "\(lines.filter { $0.hasPrefix("wrong ") || $0.hasPrefix("error ") })")
        for pattern in Self.allowed {
            #expect(lines.contains("ok \(pattern)"), "allowed pattern \(pattern) did not finish right: \(lines)")
        }
        for (pattern, code, says) in Self.refused {
            let line = lines.first { $0.hasPrefix("refused \(pattern) ") }
            #expect(line?.hasPrefix("refused \(pattern) \(code):") == true, "\(pattern): \(line ?? "no outcome")")
            #expect(line?.contains(says) == true, "\(pattern) should say \"\(says)\": \(line ?? "no outcome")")
        }
        #expect(lines.filter { $0.hasPrefix("start ") }.count == Self.allowed.count + Self.refused.count,
                "the probe runs patterns this test does not know: \(lines)")
    }

    @Test func scopedEditsRollBackWhenTheBlockThrows() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let worker = store.makeWorkerContext()
        struct Abort: Error {}
        await worker.perform { worker in
            _ = try? worker.insert(Article.make(1))
            #expect(throws: Abort.self) {
                try worker.atomically {
                    try worker.insert(Article.make(2))
                    throw Abort()
                }
            }
        }
        #expect(await worker.object(Article.self, id: "article-1") != nil)
        #expect(await worker.object(Article.self, id: "article-2") == nil)
        await worker.rollback()
        #expect(await worker.hasChanges == false)
    }
}
