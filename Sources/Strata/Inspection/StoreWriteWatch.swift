import Dispatch

/// A watch on a store's file for writes by anyone — an app's commits, the `sqlite3` shell's, a
/// checkpoint — made by ``StoreInspector/watchWrites(_:)``; ``cancel()`` or releasing it stops it.
///
/// Sendable: its properties are `let`s — a watcher whose `cancel()` may be called from any
/// thread, and follow-ups whose state is behind a lock.
public final class StoreWriteWatch: Sendable {
    private let watcher: FileWatcher
    private let followUps: FollowUps

    /// After the last write seen, the handler is called again at each of these delays. A commit
    /// becomes visible to readers only when its writer updates the WAL index in the `-shm` file —
    /// mapped memory, whose writes inotify does not report — after the WAL write that woke the
    /// watch and, with `synchronous = FULL`, after an fsync: a read at the wake alone can miss it.
    static let followUpDelays: [DispatchTimeInterval] = [.milliseconds(10), .milliseconds(100), .seconds(1)]

    init(path: String, handler: @escaping @Sendable () -> Void) throws {
        let followUps = FollowUps(handler)
        self.followUps = followUps
        watcher = try FileWatcher(store: path) { followUps.written() }
    }

    /// Stops watching: no call of the handler starts after it returns (one running finishes).
    /// Calling it again is harmless.
    public func cancel() {
        watcher.cancel()
        followUps.cancel()
    }

    deinit { cancel() }

    /// Calls the handler at a write and again after it (``followUpDelays``), each later write
    /// putting the follow-ups off: a burst of writes costs a few calls, and an idle file none.
    ///
    /// `@unchecked Sendable` is safe: `handler` and `queue` are immutable and `pending` is a
    /// `Locked`; a `DispatchWorkItem` may be cancelled from any thread.
    private final class FollowUps: @unchecked Sendable {
        private let handler: @Sendable () -> Void
        private let queue = DispatchQueue(label: "strata.write-watch", qos: .utility)
        /// The scheduled follow-ups; nil once cancelled.
        private let pending = Locked<[DispatchWorkItem]?>([])

        init(_ handler: @escaping @Sendable () -> Void) { self.handler = handler }

        func written() {
            let items = StoreWriteWatch.followUpDelays.map { _ in DispatchWorkItem(block: handler) }
            let replaced = pending.withLock { pending -> [DispatchWorkItem]? in
                guard let current = pending else { return nil }
                pending = items
                return current
            }
            guard let replaced else { return }   // cancelled
            replaced.forEach { $0.cancel() }
            handler()
            for (item, delay) in zip(items, StoreWriteWatch.followUpDelays) {
                queue.asyncAfter(deadline: .now() + delay, execute: item)
            }
        }

        func cancel() {
            pending.withLock { pending in
                pending?.forEach { $0.cancel() }
                pending = nil
            }
        }
    }
}

extension StoreInspector {
    /// Calls `handler` when the store's file or its `-wal` is written, so that a tool can read
    /// what another process committed as it happens (`strata history --follow`).
    ///
    /// ```swift
    /// let (writes, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    /// let watch = try inspector.watchWrites { continuation.yield() }
    /// defer { watch.cancel() }
    /// for await _ in writes { let page = try inspector.historyPage(since: token); … }
    /// ```
    ///
    /// On Linux through inotify on the file's directory; elsewhere a poll calls it every second.
    /// After a write it is called again a few times, up to a second later (a commit becomes
    /// visible to readers a moment after its last write), then not until the next write: never
    /// a busy loop. It runs on utility queues of the process's, never on the main actor; a
    /// write that commits nothing (a checkpoint) calls it too: read again, and find nothing new.
    /// - Returns: The watch; keep it while you want calls.
    /// - Throws: `.misuse` when the file is read as immutable (``isReadAsImmutable``: later
    ///   commits cannot be seen); `.cannotOpen` when the directory cannot be watched.
    public func watchWrites(_ handler: @escaping @Sendable () -> Void) throws -> StoreWriteWatch {
        guard !isReadAsImmutable else {
            throw StrataError(.misuse, "the store is read from its database file alone (the directory is not writable), "
                              + "so later commits cannot be seen", path: path)
        }
        return try StoreWriteWatch(path: path, handler: handler)
    }
}
