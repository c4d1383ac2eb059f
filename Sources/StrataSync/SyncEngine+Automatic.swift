import Foundation
@_spi(Sync) import Strata

extension SyncEngine {
    /// Starts automatic mode: a round now; a push ``SyncConfiguration/pushDebounce`` after
    /// local saves (the store's own, other processes' once taken in; never the engine's own
    /// writes); and one outstanding long-poll pull, so that the server's new changes arrive
    /// without a poll interval. Transient failures are retried with exponential backoff
    /// (``SyncConfiguration/initialRetryDelay`` doubling up to ``SyncConfiguration/maximumRetryDelay``);
    /// nothing is dropped meanwhile. A refusal (``SyncError/Code/rejected``) stops the retries
    /// until the next local save or ``sync()``. Starting twice changes nothing.
    ///
    /// ```swift
    /// await engine.start()
    /// // … the app saves as usual …
    /// await engine.stop()
    /// ```
    public func start() {
        guard automatic.isEmpty else { return }
        let saves = store.acceptedChangeAuthors()
        let author = configuration.author
        automatic.append(Task { [weak self] in
            for await saved in saves where saved != author {
                await self?.schedulePush()
            }
        })
        automatic.append(Task { [weak self] in await self?.pollLoop() })
        schedulePush()
    }

    /// Stops automatic mode: the long poll and any scheduled push are cancelled (a push or a
    /// page being applied finishes). What was not pushed yet stays in the history, and is
    /// pushed by the next round.
    public func stop() async {
        for task in automatic { task.cancel() }
        automatic = []
        debouncedPush?.cancel()
        debouncedPush = nil
        runningPush?.cancel()
        runningPush = nil
        await setPhase(.stopped)
    }

    /// Whether automatic mode runs.
    public var isStarted: Bool { !automatic.isEmpty }

    /// A push after the debounce delay, replacing one scheduled before and still waiting (a
    /// burst of saves pushes once). A push that started is never cancelled by a later save: it
    /// runs to its end (or its reported failure), and the next one waits for it.
    func schedulePush() {
        // A save seen while stopping schedules nothing.
        guard !automatic.isEmpty else { return }
        debouncedPush?.cancel()
        let delay = configuration.pushDebounce
        debouncedPush = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(max(0, delay) * 1_000_000_000))
            guard !Task.isCancelled else { return }
            await self?.startPush()
        }
    }

    /// Starts a push in a task of its own, which only ``stop()`` cancels.
    private func startPush() {
        guard !automatic.isEmpty else { return }
        runningPush = Task { [weak self] in
            await self?.retrying { engine in try await engine.pushRound() }
        }
    }

    /// A push, reported like a round.
    func pushRound() async throws {
        emit(.started)
        await setPhase(.syncing)
        try await pushAll()
        emit(.idle)
        await MainActor.run { [status] in
            status.phase = .idle
            status.lastSynced = Date()
        }
    }

    /// The long poll: pull with ``SyncConfiguration/pullWait``, apply, and again, until stopped.
    func pollLoop() async {
        while !Task.isCancelled {
            let succeeded = await retrying { engine in try await engine.pullAll(wait: engine.configuration.pullWait) }
            if !succeeded { return }
        }
    }

    /// Runs `body` until it succeeds, retrying transient failures with backoff; reports each
    /// failure. Returns false after a failure that is not transient, or when cancelled.
    @discardableResult
    func retrying(_ body: @Sendable (SyncEngine) async throws -> Void) async -> Bool {
        var attempt = 0
        while !Task.isCancelled {
            do {
                try await body(self)
                return true
            } catch {
                if Task.isCancelled { return false }
                let failure = SyncError.wrapping(error, doing: "an automatic sync")
                attempt += 1
                let delay = failure.isTransient ? configuration.retryDelay(attempt: attempt) : nil
                emit(.failed(failure, retryIn: delay))
                await setPhase(failure.isTransient ? .offline(failure) : .failed(failure))
                guard let delay else { return false }
                try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
            }
        }
        return false
    }
}
