import Foundation

/// A private object graph for heavy work — sync imports, big fetches, bulk edits — with its own
/// serial execution (an actor), like a Core Data private-queue context.
///
/// A worker fetches from the root into its own copies, edits them, and ``save()`` pushes one
/// change set to the root and returns without waiting for disk; the root merges it into the
/// main context. Changes saved elsewhere are merged into the copies the worker holds before each
/// of its operations, following its ``mergePolicy``.
///
/// ```swift
/// let worker = store.makeWorkerContext(name: "sync")
/// try await worker.perform { worker in
///     for article in downloaded { try worker.insert(article) }
///     try worker.save()
/// }
/// ```
///
/// Reentrancy cannot deadlock: ``perform(_:)`` takes a synchronous closure, so a nested
/// `perform` on the same worker cannot be awaited inside it — the compiler rejects it — and
/// everything the closure calls on the worker runs inline.
///
/// Each worker runs on a serial dispatch queue of its own, as a Core Data private-queue context
/// does, not on Swift's global concurrent pool: a `perform` holds its thread for as long as its
/// closure runs (an import's insert-and-save), and that pool has only as many threads as cores.
/// A few importing workers on it would hold every thread, and every task waiting to resume there
/// would wait for the import — a main-actor task resumed by a continuation, a `Task.sleep`, a
/// live query's `diffs()` consumer.
public actor WorkerContext {
    private nonisolated let executor: QueueExecutor
    /// The worker's own serial queue (see above).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// The name given at creation: the origin of its saves in ``ContextChange``.
    public nonisolated let name: String
    /// The store this worker belongs to.
    public nonisolated let store: Store
    private let graph: ObjectGraph
    /// How many of the worker's saves wait to be applied to its copies (for tests).
    var unappliedSaveCount: Int { graph.unappliedSaveCount }
    private let mailbox = Locked<[StoreEvent]>([])
    private nonisolated let observerID: UUID

    init(store: Store, name: String, policy: MergePolicy) {
        executor = QueueExecutor(label: "strata.worker.\(name)")
        self.name = name
        self.store = store
        let mailbox = self.mailbox
        let (id, sequence) = store.addAcceptObserver { event in
            mailbox.withLock { $0.append(event) }
        }
        observerID = id
        graph = ObjectGraph(registry: store.registry, identity: ContextIdentity(id: UUID(), name: name), policy: policy,
                            // Workers keep no values: they read objects to change them, once.
                            registersNew: false, keepsIndexes: false, valueCacheLimit: 0, startingAt: sequence)
    }

    deinit { store.removeAcceptObserver(observerID) }

    /// What happens when a merge touches an object with unsaved edits, and how a save of an
    /// object changed from outside since it was read is written. Default:
    /// ``MergePolicy/mergeProperties`` (see ``MergePolicy``).
    public var mergePolicy: MergePolicy {
        get { graph.policy }
        set { graph.policy = newValue }
    }

    /// Sets the merge policy.
    public func setMergePolicy(_ policy: MergePolicy) { graph.policy = policy }

    /// Merges what the store accepted since the last operation into the copies this worker holds.
    private func absorb() {
        let items = mailbox.withLock { items -> [StoreEvent] in
            defer { items.removeAll() }
            return items
        }
        for item in items {
            do {
                switch item {
                case .accepted(let sequence, let changes): _ = try graph.merge(sequence: sequence, changes: changes)
                // The change set never reached SQLite: drop the copies it touched (fetch again).
                case .failed(_, let changes, let conflicts):
                    graph.forget(touchedBy: changes)
                    try graph.restoreEdits(of: changes, conflicts: conflicts)
                }
            } catch {
                store.logger.error("merge into worker \(name) failed", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Runs `body` on the worker, serially with its other work. The closure is synchronous:
    /// everything it does on the worker is atomic with respect to other `perform` calls.
    public func perform<T: Sendable>(_ body: @Sendable (isolated WorkerContext) throws -> T) rethrows -> T {
        absorb()
        return try body(self)
    }

    // MARK: Reading

    /// Fetches from the root (SQL plus pending changes), registers private copies, and returns
    /// them (unsaved edits win). Cancelling the calling task stops it (`CancellationError`)
    /// before anything is registered.
    public func fetch<E: Entity>(_ query: Query<E>) async throws -> [E] {
        graph.beginFetch()
        defer { graph.endFetch() }
        while true {
            let (block, sequence) = try await store.fetchSnapshot(query)
            // Merges skip objects a worker does not hold. If something newer than the snapshot
            // was merged while it was read (actor reentrancy), those objects missed it: read again.
            guard graph.mergedSequence <= sequence else { continue }
            let table = try graph.table(E.self)
            let keys = (0..<block.count).map(block.key(at:))
            try table.fill(block, asOf: sequence, policy: graph.policy)
            absorb()   // what was accepted after the snapshot, now that the objects are held
            return try table.visible(E.self, keys: keys)
        }
    }

    /// The IDs matching a query, from the root, without registering objects — cheap enough to
    /// hand to the main context's ``MainContext/materialize(_:ids:)``.
    public func fetchIDs<E: Entity>(_ query: Query<E>) async throws -> [E.ID] {
        try await store.ids(query)
    }

    /// The worker's copy of an object, if it holds one.
    public func object<E: Entity>(_ type: E.Type, id: E.ID) -> E? {
        absorb()
        return try? graph.table(type).visible(E.self, id.databaseValue)
    }

    /// The objects the worker holds that match `query`, evaluated in memory.
    public func objects<E: Entity>(matching query: Query<E>) throws -> [E] {
        absorb()
        let table = try graph.table(E.self)
        return try table.query(E.self, ResolvedQuery(query, schema: table.schema))
    }

    // MARK: Editing

    /// Inserts a new object; saved by ``save()``.
    /// - Throws: ``StrataError/Code/unknownEntity`` for a type the store does not know.
    public func insert<E: Entity>(_ object: E) throws {
        absorb()
        try graph.tableForEdit(E.self).insert(object, policy: graph.policy)
    }

    /// - Throws: `.objectNotFound` when the worker does not hold the object (fetch it first).
    public func update<E: Entity>(_ object: E) throws {
        absorb()
        try graph.tableForEdit(E.self).update(object, policy: graph.policy)
    }

    /// Deletes an object by ID, whether or not the worker holds it (a sync applying a server's
    /// deletions need not fetch first); saved by ``save()``.
    ///
    /// An ID the store does not have either is deleted all the same: nothing fails, nothing
    /// changes (the object is absent, as asked; an ``update(_:)`` of a missing object fails
    /// instead, because its values would be lost). A deletion of an object the worker does not
    /// hold is based on nothing: any change to that object merged before the save is a conflict,
    /// resolved by ``mergePolicy``.
    public func delete<E: Entity>(_ type: E.Type, id: E.ID) throws {
        absorb()
        try graph.tableForEdit(type).delete(id.databaseValue, policy: graph.policy)
    }

    /// Whether there are unsaved edits.
    public var hasChanges: Bool { graph.hasChanges }

    /// Pushes the unsaved edits to the root as one change set and returns at once (no disk wait).
    /// Returns nil when there was nothing to save.
    ///
    /// The worker's own copies of what it saved are brought up to date at its next call (a read,
    /// an edit, a fetch), before that call sees them; a worker that saves and is then dropped,
    /// as an import's usually is, never pays for it.
    /// - Throws: `.conflict` with the conflicting IDs under ``MergePolicy/reportConflict``.
    ///   `.misuse` when called inside ``atomically(_:)`` (save after the block returns).
    @discardableResult
    public func save() throws -> Submission? { try save(historyAuthor: nil) }

    /// ``save()``, recording `author` instead of the worker's name as the history's
    /// ``HistoryTransaction/author`` — `"sync"` for what a sync engine applies, so that it can
    /// skip its own changes when it reads the history.
    @discardableResult
    public func save(author: String) throws -> Submission? { try save(historyAuthor: author) }

    private func save(historyAuthor: String?) throws -> Submission? {
        absorb()
        let mailbox = self.mailbox
        return try graph.save(to: store, author: historyAuthor, absorb: { _ in absorb() }, unmerged: { mailbox.withLock { $0 } })?.0
    }

    /// Waits until everything this worker (and anyone) submitted so far is committed.
    public func persist() async throws { try await store.persist() }

    /// Discards every unsaved edit.
    public func rollback() { graph.rollback() }

    /// Runs `body`; if it throws, the edits it made are undone (a savepoint on the context).
    public func atomically<T>(_ body: () throws -> T) rethrows -> T {
        absorb()
        return try graph.atomically(body)
    }

    /// How many merged deletions the worker remembers for fetches in flight (for tests).
    var rememberedDeletionCount: Int { graph.rememberedDeletionCount }

    /// The IDs of unsaved edits that conflict with changes saved elsewhere (``MergePolicy/reportConflict``),
    /// as stored keys of every entity. ``conflictingIDs(_:)`` gives one entity's, typed.
    public var conflictingIDs: [DatabaseValue] {
        absorb()
        return graph.tables.values.flatMap(\.conflictingIDs)
    }

    /// The IDs of `type`'s unsaved edits that conflict with changes saved elsewhere
    /// (``MergePolicy/reportConflict``), in ID order.
    public func conflictingIDs<E: Entity>(_ type: E.Type) -> [E.ID] {
        absorb()
        return graph.conflictingIDs(type)
    }

    /// Resolves one conflicted edit (``MergePolicy/reportConflict``) and leaves every other unsaved
    /// edit as it is, like ``MainContext/resolveConflict(_:id:by:)``.
    /// - Throws: `.misuse` when the object has no conflicted edit.
    public func resolveConflict<E: Entity>(_ type: E.Type, id: E.ID, by resolution: ConflictResolution) throws {
        absorb()
        try graph.table(type).resolveConflict(id.databaseValue, by: resolution)
    }
}

extension Store {
    /// Makes a worker context: a private object graph with its own serial execution.
    /// - Parameters:
    ///   - name: Shown as the origin of its saves in ``ContextChange``.
    ///   - mergePolicy: What happens when a merge touches an object with unsaved edits.
    public func makeWorkerContext(name: String = "worker", mergePolicy: MergePolicy = .default) -> WorkerContext {
        WorkerContext(store: self, name: name, policy: mergePolicy)
    }
}
