/// Wakes the long polls of a space when a push to it commits (told by ``ChangeListener``).
///
/// A pull takes the space's ``generation(of:)`` *before* it reads the log and waits only while
/// the generation is unchanged, so a push that commits between the read and the wait is never
/// missed. ``signalAll()`` (after the listening connection was lost and is back) wakes everyone:
/// notifications sent while nobody listened are gone, so every waiter reads the log again.
actor ChangeNotifier {
    private var counts: [Int64: UInt64] = [:]
    private var epoch: UInt64 = 0
    private var waiters: [Int64: [UInt64: CheckedContinuation<Void, Never>]] = [:]
    private var nextWaiter: UInt64 = 0

    /// Changes whenever the space may have new entries.
    func generation(of user: Int64) -> UInt64 { epoch &+ counts[user, default: 0] }

    func signal(_ user: Int64) {
        counts[user, default: 0] &+= 1
        guard let woken = waiters.removeValue(forKey: user) else { return }
        for continuation in woken.values { continuation.resume() }
    }

    func signalAll() {
        epoch &+= 1
        let all = waiters
        waiters = [:]
        for continuation in all.values.flatMap(\.values) { continuation.resume() }
    }

    /// How many pulls wait now (what the tests wait for before pushing).
    var waiterCount: Int { waiters.values.reduce(0) { $0 + $1.count } }

    /// Returns once the space's generation is past `seen`, or after `timeout`.
    nonisolated func wait(for user: Int64, past seen: UInt64, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.suspend(user, past: seen) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func suspend(_ user: Int64, past seen: UInt64) async {
        guard generation(of: user) == seen else { return }
        nextWaiter &+= 1
        let id = nextWaiter
        await withTaskCancellationHandler {
            // The body runs on this actor without a suspension after the check above, so the
            // continuation is stored before `cancel` (which needs the actor) can look for it.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                waiters[user, default: [:]][id] = continuation
            }
        } onCancel: {
            Task { await self.cancel(id, of: user) }
        }
    }

    /// Resumes a waiter whose wait was cancelled (its timeout came first); one a signal already
    /// resumed is gone from `waiters`.
    private func cancel(_ id: UInt64, of user: Int64) {
        waiters[user]?.removeValue(forKey: id)?.resume()
    }
}
