import Foundation

extension Store {
    /// Starts watching the database file and its WAL for commits by anyone else (another process,
    /// the `sqlite3` shell): each burst of writes queues one look at the change log on the store's
    /// queue (``takeInOutsideCommits(_:)``), and looks follow at 10 ms, 100 ms and 1 s after the
    /// burst, since a commit becomes visible only when its writer updates the WAL index, which
    /// can come after the wake (``FileWatcher/storeFollowUpDelays``). Each look tells the
    /// contexts of what someone else committed — the store's own commits leave `PRAGMA
    /// data_version` unchanged, so they cost those looks and nothing more. Called once, at open; ``close()`` stops it. When the directory
    /// cannot be watched the store still takes outside commits in at its next fetch or write.
    func watchOutsideCommits() {
        do {
            let watcher = try FileWatcher(store: path, followUps: true) { [weak self] in self?.outsideWriteSignalled() }
            outsideWatcher.withLock { $0 = watcher }
        } catch {
            logger.warning("other processes' commits reach the contexts only at the next fetch or write",
                           metadata: ["error": "\(error)"])
        }
    }

    /// The shortest time between two looks at the change log for writes the watcher saw: a
    /// writer committing a thousand times a second reaches the contexts as one change set per
    /// interval, not one per commit (each would be a merge on the main actor).
    static let outsideLookInterval: DispatchTimeInterval = .milliseconds(10)

    /// Queues one look at the change log, unless one is queued already, no sooner than
    /// ``outsideLookInterval`` after the last one.
    private func outsideWriteSignalled() {
        let deadline = pipeline.withLock { state -> DispatchTime? in
            guard !state.outsideCheckQueued, !state.isClosed else { return nil }
            state.outsideCheckQueued = true
            return state.lastOutsideLook.map { max(.now(), $0 + Self.outsideLookInterval) } ?? .now()
        }
        guard let deadline else { return }
        queue.asyncAfter(deadline: deadline) {
            self.pipeline.withLock { state in
                state.outsideCheckQueued = false
                state.lastOutsideLook = .now()
            }
            do {
                try self.withOpenWriter { self.takeInOutsideCommits($0) }
            } catch let error as StrataError where error.code == .fileReplaced {
                self.reportReplaced(error)
            } catch {
                // Closed meanwhile: nothing to look at.
            }
        }
    }

    /// Tells the app, once, through ``failures()`` and the log, that the file was replaced
    /// underneath the store (seen by the watcher: the store may have nothing to commit or read).
    private func reportReplaced(_ error: StrataError) {
        let observers = pipeline.withLock { state -> [AsyncStream<StrataError>.Continuation]? in
            guard !state.reportedReplacement else { return nil }
            state.reportedReplacement = true
            return Array(state.failureObservers.values)
        }
        guard let observers else { return }
        logger.error("the database file was replaced underneath the store", metadata: ["error": "\(error)"])
        for observer in observers { observer.yield(error) }
    }

    /// Stops watching for other processes' commits (``close()``).
    func stopWatchingOutsideCommits() {
        outsideWatcher.withLock { watcher in
            watcher?.cancel()
            watcher = nil
        }
    }
}
