import Foundation
@testable import Strata
import StrataTestSupport
import Testing

// MARK: - Entities of the pipeline tests

struct PipelineItem: Entity, Equatable {
    var id: String
    var group: Int64
    var score: Double
    var label: String?
    var isDone: Bool

    static func make(_ index: Int, group: Int64? = nil, done: Bool = false) -> PipelineItem {
        PipelineItem(id: String(format: "item-%05d", index), group: group ?? Int64(index % 5), score: Double(index) / 2,
                     label: index % 4 == 0 ? nil : "label \(index)", isDone: done)
    }
}

struct PipelineContact: Entity, Equatable {
    var id: Int64
    var email: String
    var name: String

    static let indexes = [EntityIndex(["email"], unique: true)]
}

let pipelineEntities: [any Entity.Type] = [PipelineItem.self, PipelineContact.self]

// MARK: - Synchronisation helpers (bounded: a bug makes a test fail, never hang)

/// The error `body` throws as a StrataError, or nil when it succeeds (or throws something else).
func strataError(_ body: () async throws -> Void) async -> StrataError? {
    do {
        try await body()
        return nil
    } catch let error as StrataError {
        return error
    } catch {
        Issue.record("expected a StrataError, got \(error)")
        return nil
    }
}

/// Calls `persist()` until it succeeds, tolerating only transient `.busy` failures of attempts
/// that started while another connection still held the lock. Bounded.
func persistAfterLockReleased(_ store: Store) async throws {
    for _ in 0..<20 {
        do {
            try await store.persist()
            return
        } catch let error as StrataError where error.code == .busy {
            continue
        }
    }
    Issue.record("persist() kept failing with .busy after the lock was released")
}

/// When each transaction attempt started (the store's statement observer, called on its queue).
final class AttemptClock: Sendable {
    private let lock = NSLock()
    // Safe: only read or written while `lock` is held.
    private nonisolated(unsafe) var instants: [ContinuousClock.Instant] = []

    var observer: @Sendable (String) -> Void {
        { [self] sql in
            guard sql == "BEGIN IMMEDIATE TRANSACTION" else { return }
            let now = ContinuousClock.now
            lock.withLock { instants.append(now) }
        }
    }
    var times: [ContinuousClock.Instant] { lock.withLock { instants } }
    func clear() { lock.withLock { instants.removeAll() } }
}

func isBegin(_ sql: String) -> Bool { sql == "BEGIN IMMEDIATE TRANSACTION" }
func isCommit(_ sql: String) -> Bool { sql == "COMMIT TRANSACTION" }
func isSavepoint(_ sql: String) -> Bool { sql.hasPrefix("SAVEPOINT ") }
func isRelease(_ sql: String) -> Bool { sql.hasPrefix("RELEASE SAVEPOINT ") }
func isSavepointRollback(_ sql: String) -> Bool { sql.hasPrefix("ROLLBACK TRANSACTION TO SAVEPOINT ") }

/// The number of `?` placeholders in a statement.
func placeholders(_ sql: String) -> Int { sql.utf8.filter { $0 == UInt8(ascii: "?") }.count }
