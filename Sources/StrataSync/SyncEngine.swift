import Foundation
@_spi(Sync) import Strata
import StrataSyncWire

/// Syncs a store with a server: pushes the local history, pulls and applies what other devices
/// pushed, settles conflicts by a ``ConflictPolicy``.
///
/// ```swift
/// let engine = try SyncEngine(store: store, transport: HTTPSyncTransport(server: url, token: token),
///                             entities: [Article.self, Feed.self])
/// try await engine.sync()      // "sync now": pull, then push, until nothing is left
/// await engine.start()         // or: after every local save, and whenever the server has news
/// ```
///
/// **Push** reads the store's history after the last acknowledged position, leaving out the
/// engine's own transactions (``SyncConfiguration/author``: what it pulled is never sent back),
/// and sends it in numbered batches. A batch's history range is stored before it is first sent
/// and its number is never reused: a retry — after a timeout, a crash, a restart — sends the
/// same batch, which the server applies at most once. Values are read from the store when the
/// batch is built; a bulk update travels as one entry with its IDs in the compact form.
///
/// **Pull** asks for the entries after the stored cursor and applies each page through one
/// change set authored ``SyncConfiguration/author``, the new cursor stored in the same
/// transaction: a process killed at any point resumes with nothing lost and nothing applied
/// twice. Entries this device pushed are skipped. A server that no longer serves the cursor
/// sends every object's state instead (a full pull, keeping unpushed local edits).
///
/// All state (device ID, cursor, batch numbers, pending batch, clock) lives in the store file,
/// under stored-value keys starting with `strata.sync.`, and the engine registers the history
/// consumer `strata.sync` so that the history it has not pushed is never pruned.
public actor SyncEngine {
    /// The store being synced.
    public nonisolated let store: Store
    /// How the engine talks to its server.
    public nonisolated let transport: any SyncTransport
    /// How conflicts with unpushed local edits are settled.
    public nonisolated let policy: ConflictPolicy
    /// Authors, sizes and timing.
    public nonisolated let configuration: SyncConfiguration
    /// What the engine is doing, observable on the main actor.
    public nonisolated let status: SyncStatus

    let entities: [any Entity.Type]
    let schemas: [String: EntitySchema]
    var state: SyncState?
    /// The first read of the state, while it runs (``loadedState()``).
    var loading: Task<SyncState, any Error>?
    var eventContinuations: [UUID: AsyncStream<SyncEvent>.Continuation] = [:]
    /// The last round ``sync()`` started: the next one runs after it.
    var lastRound: Task<Void, any Error>?
    /// Whether a push or the application of a pulled page is running (``exclusively(_:)``).
    var isBusy = false
    var busyWaiters: [CheckedContinuation<Void, Never>] = []
    /// Automatic mode's tasks (``start()``).
    var automatic: [Task<Void, Never>] = []
    var debouncedPush: Task<Void, Never>?
    var runningPush: Task<Void, Never>?

    /// The history consumer the engine registers: pruning never passes what it has not pushed.
    static let historyConsumer = "strata.sync"

    /// An engine syncing `entities` of `store` through `transport`.
    /// - Parameters:
    ///   - store: The store; its history is what is pushed.
    ///   - transport: The server (``HTTPSyncTransport``, or an app's own).
    ///   - entities: The entity types to sync: their changes are pushed, and pulled changes of
    ///     other entities are ignored.
    ///   - policy: How conflicts with unpushed local edits are settled.
    ///   - configuration: Author, sizes, timing.
    /// - Throws: `StrataError` `.unknownEntity` for an entity the store does not register.
    public init(store: Store, transport: any SyncTransport, entities: [any Entity.Type],
                policy: ConflictPolicy = .default, configuration: SyncConfiguration = SyncConfiguration()) throws {
        self.store = store
        self.transport = transport
        self.policy = policy
        self.configuration = configuration
        self.entities = entities
        var schemas: [String: EntitySchema] = [:]
        for type in entities {
            let schema = try store.schema(of: type)
            schemas[schema.name] = schema
        }
        self.schemas = schemas
        self.status = SyncStatus()
    }

    /// This device's ID, as the server knows it: made and stored in the store file on first use.
    /// - Throws: the store's error, as a ``SyncError`` of code ``SyncError/Code/store``.
    public func deviceID() async throws -> String {
        try await loadedState().device
    }

    /// A stream of what the engine does from now on: rounds started, batches pushed, pages
    /// pulled, conflicts settled, failures, idle. Each call returns a new stream; it keeps the
    /// newest 1,000 events a slow reader has not taken.
    public func events() -> AsyncStream<SyncEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<SyncEvent>.makeStream(bufferingPolicy: .bufferingNewest(1000))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeEvents(id) }
        }
        eventContinuations[id] = continuation
        return stream
    }

    private func removeEvents(_ id: UUID) { eventContinuations[id] = nil }

    func emit(_ event: SyncEvent) {
        for continuation in eventContinuations.values { continuation.yield(event) }
    }

    /// "Sync now": pulls every page after the cursor, then pushes every batch of local history,
    /// and returns when nothing is left, or throws the first failure (nothing is lost by it:
    /// unpushed history stays, and a pulled page is applied whole or not at all). A call while
    /// a round runs waits for it and runs another, so that it covers every save made before it.
    /// - Throws: ``SyncError``.
    public func sync() async throws {
        let previous = lastRound
        let round = Task {
            _ = await previous?.result
            try await self.round(wait: 0)
        }
        lastRound = round
        try await round.value
    }

    /// One round: pull, push, report.
    func round(wait: Int) async throws {
        emit(.started)
        await setPhase(.syncing)
        do {
            try await pullAll(wait: wait)
            try await pushAll()
            emit(.idle)
            await MainActor.run { [status] in
                status.phase = .idle
                status.lastSynced = Date()
            }
        } catch {
            let failure = SyncError.wrapping(error, doing: "a sync round")
            emit(.failed(failure, retryIn: nil))
            await setPhase(failure.isTransient ? .offline(failure) : .failed(failure))
            throw failure
        }
    }

    func setPhase(_ phase: SyncStatus.Phase) async {
        await MainActor.run { [status] in status.phase = phase }
    }

    /// The state, read from the store once; a new device's ID is stored first. Concurrent first
    /// calls share one read, so that a new device stores one ID.
    func loadedState() async throws -> SyncState {
        if let state { return state }
        if let loading { return try await loading.value }
        let store = store, author = configuration.author
        let task = Task { () throws -> SyncState in
            do {
                let (loaded, isNew) = try await SyncState.load(from: store)
                if isNew {
                    var changes = ChangeSet()
                    changes.transactionAuthor = author
                    loaded.write([.device], into: &changes)
                    try await store.submit(changes).committed()
                }
                try await store.registerHistoryConsumer(Self.historyConsumer)
                return loaded
            } catch {
                throw SyncError.wrapping(error, doing: "reading the sync state")
            }
        }
        loading = task
        defer { loading = nil }
        let loaded = try await task.value
        if let state { return state }
        state = loaded
        return loaded
    }

    /// Runs `body` while no other push or pulled page is being applied: a push and a pull's
    /// conflict decisions never interleave.
    func exclusively<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        while isBusy { await withCheckedContinuation { busyWaiters.append($0) } }
        isBusy = true
        defer {
            isBusy = false
            if !busyWaiters.isEmpty { busyWaiters.removeFirst().resume() }
        }
        return try await body()
    }

    /// Submits `changes` with `keys` of the state written into them, and waits for the commit.
    /// The in-memory state is `updated` at submission, so that submissions and state agree in order.
    func commit(_ changes: ChangeSet, state updated: SyncState, keys: [SyncState.Key]) async throws {
        var changes = changes
        changes.transactionAuthor = configuration.author
        updated.write(keys, into: &changes)
        let submission: Submission
        do {
            submission = try store.submit(changes)
        } catch {
            throw SyncError.wrapping(error, doing: "storing pulled changes")
        }
        state = updated
        do {
            try await submission.committed()
        } catch {
            // The change set failed for good (or is still pending after a transient failure):
            // the state in the file is what was committed before; read it again.
            state = nil
            throw SyncError.wrapping(error, doing: "committing the sync state")
        }
    }
}
