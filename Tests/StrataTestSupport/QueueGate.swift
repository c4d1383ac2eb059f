import Dispatch

/// Blocks the queue that runs ``hold()`` (a store's, from inside `read` or `write`) until
/// ``release()``: a scripted point in an interleaving, not a sleep.
public final class QueueGate: Sendable {
    public let entered = DispatchSemaphore(value: 0)
    public let released = DispatchSemaphore(value: 0)

    public init() {}

    /// Says the queue got here, then waits (at most 60 s) for ``release()``; false on timeout.
    public func hold() -> Bool {
        entered.signal()
        return released.wait(timeout: .now() + 60) == .success
    }

    public func release() { released.signal() }
}
