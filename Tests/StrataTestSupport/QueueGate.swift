import Dispatch

/// Blocks the queue that runs ``hold()`` (a store's, from inside `read` or `write`) until
/// ``release()``: a scripted point in an interleaving, not a sleep.
public final class QueueGate: Sendable {
    public let entered = DispatchSemaphore(value: 0)
    public let released = DispatchSemaphore(value: 0)

    public init() {}

    /// Says the queue got here, then waits (at most 60 s, times ``waitScale``) for ``release()``;
    /// false on timeout. A bound, not a duration: a test that holds a gate releases it itself,
    /// and under a sanitizer a whole test can outlast the unscaled bound (a writer held for a
    /// property test's eight rounds was let go after 60 s of a 111-s run, and its store committed).
    public func hold() -> Bool {
        entered.signal()
        return released.wait(timeout: .now() + 60 * waitScale) == .success
    }

    public func release() { released.signal() }
}
