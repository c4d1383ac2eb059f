import Foundation

extension Store {
    /// Starts watching the database file and its WAL for commits by anyone else (another process,
    /// the `sqlite3` shell): each burst of writes queues one look at the change log on the store's
    /// queue (``takeInOutsideCommits(_:)``), which tells the contexts of what someone else
    /// committed — the store's own commits move the log no further than it knows, so they cost
    /// that look and nothing more. Called once, at open; ``close()`` stops it. When the directory
    /// cannot be watched the store still takes outside commits in at its next fetch or write.
    func watchOutsideCommits() {
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        do {
            let watcher = try FileWatcher(directory: url.deletingLastPathComponent().path,
                                          names: [name, name + "-wal", name + "-journal"]) { [weak self] in
                self?.outsideWriteSignalled()
            }
            outsideWatcher.withLock { $0 = watcher }
        } catch {
            logger.warning("other processes' commits reach the contexts only at the next fetch or write",
                           metadata: ["error": "\(error)"])
        }
    }

    /// Queues one look at the change log, unless one is queued already (a writer committing a
    /// thousand times a second costs a look per burst, not per commit).
    private func outsideWriteSignalled() {
        let schedule = pipeline.withLock { state -> Bool in
            defer { state.outsideCheckQueued = true }
            return !state.outsideCheckQueued && !state.isClosed
        }
        guard schedule else { return }
        queue.async {
            self.pipeline.withLock { $0.outsideCheckQueued = false }
            try? self.withOpenWriter { self.takeInOutsideCommits($0) }
        }
    }

    /// Stops watching for other processes' commits (``close()``).
    func stopWatchingOutsideCommits() {
        outsideWatcher.withLock { watcher in
            watcher?.cancel()
            watcher = nil
        }
    }
}
