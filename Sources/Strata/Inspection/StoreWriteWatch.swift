import Dispatch

/// A watch on a store's file for writes by anyone — an app's commits, the `sqlite3` shell's, a
/// checkpoint — made by ``StoreInspector/watchWrites(_:)``; ``cancel()`` or releasing it stops it.
///
/// Sendable: its one property is a `let`, a watcher whose `cancel()` may be called from any thread.
public final class StoreWriteWatch: Sendable {
    private let watcher: FileWatcher

    init(path: String, handler: @escaping @Sendable () -> Void) throws {
        watcher = try FileWatcher(store: path, followUps: true, handler: handler)
    }

    /// Stops watching: no call of the handler starts after it returns (one running finishes).
    /// Calling it again is harmless.
    public func cancel() {
        watcher.cancel()
    }

    deinit { cancel() }
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
