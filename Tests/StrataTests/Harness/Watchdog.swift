import Foundation
import StrataTestSupport
import Testing

struct WatchdogTimeout: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "did not finish within \(seconds) s (deadlock?)" }
}

/// Runs `operation`, failing with ``WatchdogTimeout`` if it has not finished after `seconds`.
/// A watchdog, not synchronization: a correct run never waits for the timer.
func withWatchdog<T: Sendable>(seconds: Double = 30, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw WatchdogTimeout(seconds: seconds)
        }
        group.cancelAll()
        return value
    }
}

/// Waits on a semaphore without blocking forever: a failed wait is a test failure, not a hang.
func waitOrFail(_ semaphore: DispatchSemaphore, seconds: Double = 30, _ what: String) {
    let result = semaphore.wait(timeout: .now() + seconds * waitScale)
    #expect(result == .success, "timed out waiting for \(what)")
}

extension Trait where Self == TimeLimitTrait {
    /// The time limit of the long concurrency, crash and model tests: a hang detector, not a
    /// performance bound. Sized for the sanitizer jobs, where the whole suite runs in parallel on
    /// 2 cores about 4× slower and every main-actor test shares one main thread.
    static var hangWatchdog: Self { .timeLimit(.minutes(5)) }
}
