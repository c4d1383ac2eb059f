import Dispatch
import Foundation

/// How many times longer than its stated bound a wait here may take: `STRATA_TEST_WAIT_SCALE`
/// when set (CI's sanitizer runs set 4: under AddressSanitizer the whole suite runs 3–5× slower
/// on two cores), else 1. A bound only turns a hang into a failure; a correct run never reaches it.
public let waitScale: Double = ProcessInfo.processInfo.environment["STRATA_TEST_WAIT_SCALE"].flatMap(Double.init) ?? 1

/// Runs the blocking `body` on a thread of its own and resumes with its result. Never on
/// libdispatch's global queues: on Linux, Swift's tasks run on the same limited pool, so a test
/// blocked there (waiting on a child process, a gate) holds a thread another test's task needs —
/// under a slow sanitizer run, for long enough to fail that test's own bounded wait.
public func offThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = "strata-tests.wait"
        thread.start()
    }
}

/// Waits for `semaphore` on a thread of its own (``offThread(_:)``), so no cooperative thread,
/// dispatch thread or the main actor is held; false after `seconds` (times ``waitScale``).
public func waitOff(_ semaphore: DispatchSemaphore, seconds: Double = 30) async -> Bool {
    await offThread { semaphore.wait(timeout: .now() + seconds * waitScale) == .success }
}

/// The next element of `stream`, or nil when none arrives within `seconds` (times
/// ``waitScale``; then the stream ends).
public func next<T: Sendable>(_ stream: AsyncStream<T>, within seconds: Double) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds * waitScale))   // a bound: a correct run never waits for it
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
