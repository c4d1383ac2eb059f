import Dispatch
import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The follow-up calls after a write (`FileWatcher.FollowUps`): a commit becomes visible to a
/// reader only when its writer updates the WAL index, which can come after the write that woke
/// the watch, so both the store and the inspector's watch look again after a burst.
@Suite struct FileWatcherFollowUpsTests {
    /// Counts calls and tells each through a stream.
    private final class Calls: Sendable {
        let stream: AsyncStream<Int>
        private let continuation: AsyncStream<Int>.Continuation
        private let count = Locked(0)
        let released: DispatchSemaphore

        init(released: DispatchSemaphore) {
            (stream, continuation) = AsyncStream.makeStream()
            self.released = released
        }

        func called() { continuation.yield(count.withLock { count in count += 1; return count }) }

        deinit { released.signal() }
    }

    @Test func aWriteIsFollowedByOneCallPerDelay() async {
        let released = DispatchSemaphore(value: 0)
        var calls: Calls? = Calls(released: released)
        let stream = calls!.stream
        var followUps: FileWatcher.FollowUps? = FileWatcher.FollowUps(delays: [.milliseconds(5), .milliseconds(20), .milliseconds(60)]) {
            [calls] in calls?.called()
        }
        calls = nil
        followUps?.fired()
        var seen: [Int] = []
        for _ in 0..<4 {
            guard let call = await next(stream, within: 10) else { break }
            seen.append(call)
        }
        #expect(seen == [1, 2, 3, 4], "the write's own call and one per delay")
        followUps?.cancel()
        followUps = nil
        // Cancelled and dropped, it releases the handler (and what it holds) without waiting for a deadline.
        #expect(await waitOff(released, seconds: 10))
    }

    @Test func aCancelledFollowUpCallsNothingMore() async {
        let released = DispatchSemaphore(value: 0)
        var calls: Calls? = Calls(released: released)
        let stream = calls!.stream
        var followUps: FileWatcher.FollowUps? = FileWatcher.FollowUps(delays: [.seconds(30)]) { [calls] in calls?.called() }
        calls = nil
        followUps?.fired()
        #expect(await next(stream, within: 10) == 1)
        followUps?.cancel()
        followUps?.fired()   // after cancellation: ignored
        followUps = nil
        // The handler is released long before the 30 s follow-up would have come due (a scheduled
        // work item would hold it until then).
        #expect(await waitOff(released, seconds: 10))
    }
}
