import Dispatch

/// Blocks the queue that runs ``hold()`` (a store's, from inside `read` or `write`) until
/// ``release()``: a scripted point in an interleaving, not a sleep.
final class QueueGate: Sendable {
    let entered = DispatchSemaphore(value: 0)
    let released = DispatchSemaphore(value: 0)

    /// Says the queue got here, then waits (at most 60 s) for ``release()``; false on timeout.
    func hold() -> Bool {
        entered.signal()
        return released.wait(timeout: .now() + 60) == .success
    }

    func release() { released.signal() }
}
