import Foundation
import Observation

/// The UI's object graph: an in-memory child of the root store, isolated to the main actor.
///
/// Reads are synchronous and served from memory — they never run SQL and never wait for a
/// write. Resident entities (``Entity/isResident``) are held whole once
/// ``loadResidentEntities()`` ran; other entities hold what was fetched into the context or
/// merged into it. Every change set the store accepts from elsewhere is merged in the store's
/// order, and observers get one ``ContextChange`` per merge that changed something.
///
/// ```swift
/// let main = store.mainContext
/// try await main.loadResidentEntities()
/// let unread = try main.objects(matching: Query<Article>(where: Attribute("isRead") == false,
///                                                       sortedBy: [Attribute("published").descending]))
/// var article = unread[0]
/// article.isStarred = true
/// try main.update(article)
/// try main.save()          // pushes to the root; returns without waiting for disk
/// ```
///
/// Objects are values: a copy handed to a network call or another thread is detached from the
/// context by construction. Two reads of one ID always agree, and show the context's unsaved
/// edit when there is one.
@MainActor
public final class MainContext {
    /// The store this context belongs to.
    public nonisolated let store: Store
    let graph: ObjectGraph
    let mailbox = Locked(Mailbox())
    private var observers: [UUID: @MainActor (ContextChange) -> Void] = [:]
    private var streams: [UUID: AsyncStream<ContextChange>.Continuation] = [:]
    private var failureStreams: [UUID: AsyncStream<StrataError>.Continuation] = [:]
    /// Callers of ``waitUntilMerged(through:)``, by the sequence they wait for.
    private var mergeWaiters: [(sequence: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    var liveQueries: [UUID: any LiveQueryUpdating] = [:]
    /// Re-reads after failed change sets that have not finished yet.
    var corrections: [UUID: Task<Void, Never>] = [:]
    private var observerID: UUID?

    /// Called after each main-actor job in which the context merged what the store accepted (a
    /// worker's save, a bulk update, a failure's correction), with how long Strata held the main
    /// actor for it — the app's own ``onChange(_:)`` handlers excluded. For monitoring against a
    /// frame's budget; nil (the default) measures nothing.
    public var onMainActorWork: (@MainActor (MainActorWork) -> Void)?
    /// Time spent in the app's change handlers during the current merge job.
    private var observerTime = Duration.zero

    /// How many saved copies of non-resident entities the context keeps before evicting the least
    /// recently used ones that no live query shows and that have no unsaved edits.
    public var registeredObjectLimit = 20_000

    /// What happens when a merge touches an object with unsaved edits, and how a save of an
    /// object changed from outside since it was read is written. Default:
    /// ``MergePolicy/mergeProperties`` (nothing anyone saved is dropped; see ``MergePolicy``).
    public var mergePolicy: MergePolicy {
        get { graph.policy }
        set { graph.policy = newValue }
    }

    struct Mailbox {
        var items: [StoreEvent] = []
        var isScheduled = false
        /// The change set being merged off the main actor (``preparation``), accepted but not
        /// merged yet: a save must not overwrite what it changes unseen.
        var preparing: [StoreEvent] = []
        /// Everything accepted and not merged yet, in order.
        var unmerged: [StoreEvent] { preparing + items }
    }

    /// The merge being prepared off the main actor, if any (see `MainContext+PreparedMerge`).
    var preparation: Preparation?
    var preparationCount: UInt64 = 0
    /// How many live-query windows were adopted from merges prepared off the main actor.
    var windowsAdopted = 0
    /// Where merges are prepared: a serial queue of its own, not Swift's cooperative thread pool,
    /// whose threads (as many as cores) the app's worker contexts may all be busy on, so that a
    /// merge never waits for one of them to come free before it starts. User-interactive, as the
    /// main actor whose work it does: the screen waits for it. (On Linux, where the process may
    /// raise priorities, libdispatch gives user-initiated threads — an importing worker's — nice
    /// −2 and user-interactive ones −4, so the merge gets the larger share of a shared core.)
    nonisolated let preparationQueue = DispatchQueue(label: "strata.main-context.merge-preparation", qos: .userInteractive)
    /// The size (objects an operation reaches) from which a change set is merged off the main
    /// actor, on a copy of the context's tables, rather than in place.
    var preparedMergeThreshold = 1_000

    init(store: Store) {
        self.store = store
        let identity = ContextIdentity(id: UUID(), name: "main")
        // Register first, then read the sequence: nothing accepted after it is missed. The
        // observer holds the context weakly, so the store never keeps it alive.
        let placeholder = Locked(WeakObject())
        let (id, sequence) = store.addAcceptObserver { event in
            (placeholder.withLock { $0.object } as? MainContext)?.enqueue(event)
        }
        graph = ObjectGraph(registry: store.registry, identity: identity, policy: .default, registersNew: true,
                            keepsIndexes: true, valueCacheLimit: store.configuration.valueCacheLimit, startingAt: sequence)
        observerID = id
        placeholder.withLock { $0.object = self }
    }

    isolated deinit {
        if let observerID { store.removeAcceptObserver(observerID) }
    }

    /// Called by the store, in acceptance order, while it holds its pipeline lock: only enqueues.
    nonisolated func enqueue(_ event: StoreEvent) {
        let schedule = mailbox.withLock { box -> Bool in
            box.items.append(event)
            defer { box.isScheduled = true }
            return !box.isScheduled
        }
        if schedule {
            Task { @MainActor in self.mergePending() }
        }
    }

    /// Merges the change sets waiting in the mailbox, in order, and notifies observers: small
    /// ones in place; a large one is handed to a merge prepared off the main actor, and those
    /// after it wait for it (it calls this again when it is done).
    func mergePending() {
        guard preparation == nil else { return }
        timed { mergeMailbox(inPlace: false) }
    }

    /// Merges everything accepted, in place, now — also a change set being prepared off the main
    /// actor, whose preparation is abandoned: for a save that has to see every accepted change.
    func mergeEverything() {
        timed {
            abandonPreparation()
            return mergeMailbox(inPlace: true)
        }
    }

    /// Runs one main-actor job of merging and reports its duration, the app's handlers excluded.
    func timed(_ job: () -> Int) {
        let start = ContinuousClock.now
        observerTime = .zero
        let changeSets = job()
        if changeSets > 0 {
            onMainActorWork?(MainActorWork(changeSets: changeSets, duration: ContinuousClock.now - start - observerTime))
        }
    }

    /// Sends a failure to the log and to ``failures()``: the app learns of it, not only the log.
    func report(_ error: Error, while doing: String) {
        let failure = Store.strataError(error, path: store.path)
        store.logger.error("main context: \(doing) failed", metadata: ["error": "\(failure)"])
        for stream in failureStreams.values { stream.yield(failure) }
    }

    /// Failures of work the main context does on its own, which no caller could be told about:
    /// merging a change set, re-reading objects after a failed save, keeping a live query current.
    /// Each call returns a new stream. (Failures to persist are ``Store/failures()``'s.)
    public func failures() -> AsyncStream<StrataError> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<StrataError>.makeStream(bufferingPolicy: .bufferingNewest(256))
        continuation.onTermination = { [weak self] _ in Task { @MainActor in self?.failureStreams[id] = nil } }
        failureStreams[id] = continuation
        return stream
    }

    // MARK: Waiting for merges

    /// Returns once the context has merged every change set up to `sequence` (whether or not it
    /// changed anything the context shows). Never hangs: every accepted change set reaches the
    /// context's mailbox, and merging it is already scheduled.
    func waitUntilMerged(through sequence: UInt64) async {
        mergePending()
        guard graph.mergedSequence < sequence else { return }
        await withCheckedContinuation { continuation in mergeWaiters.append((sequence, continuation)) }
    }

    /// Returns once the context has merged every change set the store accepted before the call,
    /// including one being merged off the main actor.
    func mergeAccepted() async {
        await waitUntilMerged(through: store.pipeline.withLock { $0.nextSequence - 1 })
    }

    func resumeMergeWaiters() {
        guard !mergeWaiters.isEmpty else { return }
        let merged = graph.mergedSequence
        let ready = mergeWaiters.filter { $0.sequence <= merged }
        mergeWaiters.removeAll { $0.sequence <= merged }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Brings the live queries up to date with `change` and notifies the observers. `changedKeys`:
    /// the keys the change lists, by entity, and `windows` the live queries' windows brought up
    /// to date, where a prepared merge made them already.
    func publish(_ change: ContextChange, changedKeys: [String: Set<DatabaseValue>] = [:],
                 windows: [UUID: PreparedMerge.Window] = [:]) {
        var changedKeys = changedKeys
        for (id, query) in liveQueries {
            guard let changes = change.entities[query.entityName], !changes.isEmpty else { continue }
            if let prepared = windows[id], let windowChange = prepared.change,
               query.adopt(prepared.window, windowChange, generation: prepared.generation, change: change, in: self) {
                windowsAdopted += 1
                continue
            }
            let changed = changedKeys[query.entityName] ?? changes.objectKeys
            changedKeys[query.entityName] = changed
            query.apply(change, changed: changed, in: self)
        }
        let start = ContinuousClock.now
        defer { observerTime += ContinuousClock.now - start }
        for observer in observers.values { observer(change) }
        for stream in streams.values { stream.yield(change) }
    }

    // MARK: Reading (memory only)

    /// The object with this ID, if the context holds it. Never runs SQL.
    public func object<E: Entity>(_ type: E.Type, id: E.ID) -> E? {
        do {
            return try graph.table(type).visible(E.self, id.databaseValue)
        } catch {
            report(error, while: "reading \(E.entityName) \(id)")
            return nil
        }
    }

    /// Every object of an entity the context holds (all of them for a resident entity), in ID order.
    public func objects<E: Entity>(_ type: E.Type) -> [E] {
        (try? objects(matching: Query<E>())) ?? []
    }

    /// The objects the context holds that match `query`, evaluated in memory with the same
    /// semantics as SQL, using in-memory indexes for equality conditions. Never runs SQL.
    public func objects<E: Entity>(matching query: Query<E>) throws -> [E] {
        let table = try graph.table(E.self)
        return try table.query(E.self, ResolvedQuery(query, schema: table.schema))
    }

    /// The IDs of the held objects that match `query`, in its order and window — what
    /// ``objects(matching:)`` returns, without building any value (Core Data's object-ID fetch):
    /// for picking objects to act on by ID, such as ``updateAll(_:ids:set:author:)``. Never runs SQL.
    public func ids<E: Entity>(matching query: Query<E>) throws -> [E.ID] {
        let table = try graph.table(E.self)
        let resolved = try ResolvedQuery(query, schema: table.schema)
        return Self.ids(E.self, of: try table.windowKeys(resolved))
    }

    /// The IDs `keys` (held keys of `E`'s table) hold. `String` IDs, most apps', are made by
    /// concrete code: code generic over the app's ID type is not specialized in this module, and
    /// makes each ID through the type's metadata and witnesses (most of the cost of a search that
    /// returns thousands of IDs).
    static func ids<E: Entity>(_ type: E.Type, of keys: [DatabaseValue]) -> [E.ID] {
        guard E.ID.self == String.self else { return keys.compactMap(E.ID.fromDatabaseValue) }
        let texts = keys.compactMap { key -> String? in
            guard case .text(let text) = key else { return nil }
            return text
        }
        // `E.ID` is `String`: the same type, so the same array.
        return unsafeBitCast(texts, to: [E.ID].self)
    }

    /// The held objects that match `query`, in its order and window, as IDs and rows whose values
    /// are built only when accessed (``QueryResults``): for list screens, which show a few of the
    /// objects they ask for. Never runs SQL.
    public func results<E: Entity>(matching query: Query<E>) throws -> QueryResults<E> {
        let table = try graph.table(E.self)
        return try table.results(E.self, ResolvedQuery(query, schema: table.schema))
    }

    /// The number of held objects matching `query` (its limit and offset applied), from memory:
    /// no values are built and nothing is sorted. When the filter is exactly equality conditions
    /// on the leading attributes of an ``EntityIndex`` (`feedID == 7 && isRead == false` with an
    /// index on `feedID, isRead`) and no unsaved edit is pending, the index answers in constant time.
    public func count<E: Entity>(matching query: Query<E>) throws -> Int {
        let table = try graph.table(E.self)
        return try table.count(ResolvedQuery(query, schema: table.schema))
    }

    // MARK: Fetching (asks the root)

    /// Fetches from the root store (SQL plus the root's pending changes), registers the results,
    /// and returns the context's copies (unsaved edits win). The SQL runs on the store's queue.
    /// Cancelling the calling task stops it (`CancellationError`) before anything is registered.
    public func fetch<E: Entity>(_ query: Query<E>) async throws -> [E] {
        let (table, keys) = try await fetchAndRegister(query)
        return try table.visible(E.self, keys: keys)
    }

    /// Fetches from the root and registers the results; returns the table and, when `listingKeys`,
    /// the fetched keys in order (a load of every object lists none: 100,000 keys made on the
    /// main actor and thrown away took 4 ms of a cold start).
    private func fetchAndRegister<E: Entity>(_ query: Query<E>, listingKeys: Bool = true) async throws -> (EntityTable, [DatabaseValue]) {
        graph.beginFetch()
        defer { graph.endFetch() }
        let (block, sequence) = try await store.fetchSnapshot(query)
        let table = try graph.table(E.self)
        // A large first load (a cold start): build the indexes over it off the main actor.
        let prepared = table.registeredCount == 0 && table.indexesEnabled && block.count >= Self.preparedIndexThreshold
            ? try await Task.detached(priority: .userInitiated) { try EntityTable.indexesInParallel(of: block.schema, over: block) }.value
            : nil
        mergePending()
        let keys = listingKeys ? (0..<block.count).map(block.key(at:)) : []
        let filled = try table.fill(block, asOf: sequence, prepared: prepared, policy: graph.policy)
        publishFetched(filled, of: E.entityName, sequence: sequence)
        return (table, keys)
    }

    /// Keeps live queries equal to re-running their queries after a fetch registered objects or
    /// refreshed held copies (`filled`; nil when the fetch filled an empty table whole), and tells
    /// observers of held copies the fetch found changed, as a ``ContextChange/Origin/reload``.
    private func publishFetched(_ filled: ContextChange.EntityChanges?, of entity: String, sequence: UInt64) {
        guard let filled else {
            for query in liveQueries.values where query.entityName == entity { query.refresh(in: self) }
            return
        }
        guard !filled.isEmpty else { return }
        var change = ContextChange(origin: .reload, sequence: sequence)
        change.entities[entity] = filled
        if filled.updated.isEmpty, filled.deleted.isEmpty {
            // Objects registered, none changed: nothing an observer showed is different.
            for query in liveQueries.values where query.entityName == entity {
                query.apply(change, changed: filled.inserted, in: self)
            }
        } else {
            publish(change)
        }
    }

    /// The objects with these IDs — from memory when held, else fetched from the root and
    /// registered (Core Data's `object(with:)` for IDs found on a worker). In the order given.
    public func materialize<E: Entity>(_ type: E.Type, ids: [E.ID]) async throws -> [E] {
        let table = try graph.table(E.self)
        let missing = ids.filter { table.visibleRow($0.databaseValue) == nil }
        if !missing.isEmpty {
            _ = try await fetchAndRegister(Query<E>(where: Attribute(table.schema.primaryKey.name).in(missing)), listingKeys: false)
        }
        return try table.visible(E.self, keys: ids.map(\.databaseValue))
    }

    /// The fetch size from which a first load builds its indexes off the main actor.
    static let preparedIndexThreshold = 1_000

    /// Loads every object of every resident entity from the root.
    public func loadResidentEntities() async throws {
        for entity in store.registry.types where entity.type.residency == .resident {
            try await loadAll(entity.type)
        }
    }

    private func loadAll<E: Entity>(_ type: E.Type) async throws {
        // Register only: the context's copies of every object, which `fetch` returns, would be
        // built (three table lookups each) and thrown away.
        _ = try await fetchAndRegister(Query<E>(), listingKeys: false)
    }

    // MARK: Editing

    /// Inserts an object; saved by ``save()``.
    public func insert<E: Entity>(_ object: E) throws { try graph.tableForEdit(E.self).insert(object, policy: graph.policy) }

    /// Replaces an object the context holds with an edited copy; saved by ``save()``.
    /// - Throws: `.objectNotFound` when the context does not hold the object.
    public func update<E: Entity>(_ object: E) throws { try graph.tableForEdit(E.self).update(object, policy: graph.policy) }

    /// Deletes an object by ID, whether or not the context holds it; saved by ``save()``.
    ///
    /// The object disappears from the context's reads at once, and ``hasChanges`` becomes true.
    /// An ID the store does not have either is deleted all the same: nothing fails, nothing
    /// changes (the object is absent, as asked; an ``update(_:)`` of a missing object fails
    /// instead, because its values would be lost). A deletion of an object the context does not
    /// hold is based on nothing: any change to that object merged before the save is a conflict,
    /// resolved by ``mergePolicy``.
    public func delete<E: Entity>(_ type: E.Type, id: E.ID) throws {
        try graph.tableForEdit(type).delete(id.databaseValue, policy: graph.policy)
    }

    /// Whether there are unsaved edits.
    public var hasChanges: Bool { graph.hasChanges }

    /// Pushes the unsaved edits to the root as one change set and returns at once: the root
    /// commits in the background (``Submission/committed()`` or ``Store/persist()`` wait for it).
    /// Observers get the change immediately. Returns nil when there was nothing to save.
    /// - Throws: `.conflict` with the conflicting IDs under ``MergePolicy/reportConflict``.
    ///   `.misuse` when called inside ``atomically(_:)`` (save after the block returns).
    @discardableResult
    public func save() throws -> Submission? { try save(historyAuthor: nil) }

    /// ``save()``, recording `author` instead of `"main"` as the history's
    /// ``HistoryTransaction/author``.
    @discardableResult
    public func save(author: String) throws -> Submission? { try save(historyAuthor: author) }

    private func save(historyAuthor: String?) throws -> Submission? {
        let mailbox = self.mailbox
        guard let (submission, change) = try graph.save(to: store, author: historyAuthor,
                                                       absorb: { $0 ? mergeEverything() : mergePending() },
                                                       unmerged: { mailbox.withLock { $0.unmerged } }) else { return nil }
        if !change.isEmpty { publish(change) }
        return submission
    }

    /// Discards every unsaved edit.
    public func rollback() { graph.rollback() }

    /// The IDs of unsaved edits that conflict with changes saved elsewhere (``MergePolicy/reportConflict``),
    /// as stored keys of every entity. ``conflictingIDs(_:)`` gives one entity's, typed.
    public var conflictingIDs: [DatabaseValue] { graph.tables.values.flatMap(\.conflictingIDs) }

    /// The IDs of `type`'s unsaved edits that conflict with changes saved elsewhere
    /// (``MergePolicy/reportConflict``), in ID order.
    public func conflictingIDs<E: Entity>(_ type: E.Type) -> [E.ID] {
        graph.conflictingIDs(type)
    }

    /// Resolves one conflicted edit (``MergePolicy/reportConflict``) and leaves every other unsaved
    /// edit as it is: `.takeStored` discards it, `.reapplyEdit` applies it again on top of the
    /// stored copy. Once no edit is conflicted, ``save()`` saves again.
    /// - Throws: `.misuse` when the object has no conflicted edit.
    public func resolveConflict<E: Entity>(_ type: E.Type, id: E.ID, by resolution: ConflictResolution) throws {
        try graph.table(type).resolveConflict(id.databaseValue, by: resolution)
    }

    /// Runs `body`; if it throws, the edits it made are undone and the error is rethrown.
    public func atomically<T>(_ body: () throws -> T) rethrows -> T { try graph.atomically(body) }

    // MARK: Observing

    /// A stream of every change merged into or saved from this context.
    public func changes() -> AsyncStream<ContextChange> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<ContextChange>.makeStream()
        // Weak: the continuation is stored in `streams`; a strong capture would be a cycle.
        continuation.onTermination = { [weak self] _ in Task { @MainActor in self?.streams[id] = nil } }
        streams[id] = continuation
        return stream
    }

    /// Calls `handler` on the main actor with every change merged into or saved from this
    /// context, until the returned observation is cancelled.
    public func onChange(_ handler: @escaping @MainActor (ContextChange) -> Void) -> ChangeObservation {
        let id = UUID()
        observers[id] = handler
        return ChangeObservation { [weak self] in self?.observers[id] = nil }
    }

    // MARK: Memory

    func evictIfNeeded() {
        let protected = Set(liveQueries.values.flatMap { $0.heldKeys })
        for table in graph.tables.values where !table.schema.isResident {
            _ = table.evict(keeping: registeredObjectLimit, protected: protected)
        }
    }

    /// The number of saved copies the context holds for an entity.
    public func registeredCount<E: Entity>(_ type: E.Type) -> Int {
        (try? graph.table(type))?.registeredCount ?? 0
    }
}

/// One main-actor job of a ``MainContext``, as reported to ``MainContext/onMainActorWork``.
public struct MainActorWork: Sendable, Hashable {
    /// How many accepted change sets (or failure notices) the job merged.
    public let changeSets: Int
    /// How long the job held the main actor, the app's change handlers excluded.
    public let duration: Duration
}

/// A registration made by ``MainContext/onChange(_:)``; ``cancel()`` ends it.
@MainActor
public final class ChangeObservation {
    private var cancellation: (@MainActor () -> Void)?
    init(_ cancellation: @escaping @MainActor () -> Void) { self.cancellation = cancellation }
    /// Ends the observation: the handler is not called again. Calling it twice is harmless.
    public func cancel() {
        cancellation?()
        cancellation = nil
    }
}

extension Store {
    /// The store's main context: created on first use, and the same instance from then on.
    ///
    /// The store owns it until ``close()``, as Core Data's container keeps its view context:
    /// dropping every other reference to it loses nothing, and a warm start's filled context is
    /// this one. Closing the store lets go of it (the context and the store hold each other until
    /// then); a context still held elsewhere stays the store's main context.
    @MainActor
    public var mainContext: MainContext {
        mainContextSlot.withLock { slot in
            if let existing = slot.object as? MainContext { return existing }
            let created = MainContext(store: self)
            slot.own(created)
            return created
        }
    }
}
