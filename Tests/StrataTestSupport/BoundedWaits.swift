import Dispatch

/// Waits for `semaphore` on a dispatch thread, so no cooperative thread (or the main actor) is
/// held; false after `seconds`.
public func waitOff(_ semaphore: DispatchSemaphore, seconds: Double = 30) async -> Bool {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success)
        }
    }
}

/// The next element of `stream`, or nil when none arrives within `seconds` (then the stream ends).
public func next<T: Sendable>(_ stream: AsyncStream<T>, within seconds: Double) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next()
        }
        group.addTask {
            try? await Task.sleep(for: .seconds(seconds))   // a bound: a correct run never waits for it
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}
