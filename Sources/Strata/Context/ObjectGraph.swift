import Foundation

/// The object graph of one context: a table per entity, merges of the store's change sets in
/// the store's order, local edits, and saves. Not thread-safe: owned by one context's isolation
/// (the main actor, or a worker actor).
final class ObjectGraph {
    let registry: SchemaRegistry
    let identity: ContextIdentity
    var policy: MergePolicy {
        didSet { ownMutations &+= 1 }
    }
    /// Changes of the graph's own state that ``mutationStamp`` counts beside its tables'.
    private var ownMutations: UInt64 = 0
    /// Whether tables log the saved copies read (``EntityTable/readLog``): while a merge is
    /// prepared on a copy of the graph.
    private var logsReads = false
    /// How many `atomically` blocks are running; `save` is refused inside one.
    private var atomicDepth = 0
    /// Whether merges register objects the context did not hold (the main context does; workers
    /// only update what they fetched).
    let registersNew: Bool
    /// Whether tables keep rows and in-memory indexes (the main context, which serves queries).
    let keepsIndexes: Bool
    /// How many values built from saved copies each table keeps (``StoreConfiguration/valueCacheLimit``).
    let valueCacheLimit: Int
    /// The tables, by entity name. Reading them first applies the saves of this context not yet
    /// applied (``unappliedSaves``): nothing sees the tables without them.
    var tables: [String: EntityTable] {
        if !unappliedSaves.isEmpty { applyOwnSaves() }
        return storedTables
    }
    private var storedTables: [String: EntityTable] = [:]
    /// When each entity's table was last edited while it held no edits (on ``editClock``): a
    /// save writes its entities in this order, each entity's objects in the order they were
    /// first edited, so a change set — and the history entries it makes — lists a save's
    /// changes as the app made them, the same on every run (not in a dictionary's order).
    private var firstEdits: [String: UInt64] = [:]
    private var editClock: UInt64 = 0
    /// A worker's own saves, accepted by the store and sealed, not yet applied to its saved
    /// copies: applied, in order, when the tables are next read — by the worker's next call, or a
    /// merge of a later change set — or never, when the worker is dropped first (an import's
    /// worker saves and goes). So `save()` does no per-object work on the worker's copies.
    private var unappliedSaves: [(sequence: UInt64, changes: ChangeSet)] = []
    /// How many saves wait to be applied (for tests of the deferral).
    var unappliedSaveCount: Int { unappliedSaves.count }
    /// The last store sequence merged.
    private(set) var mergedSequence: UInt64
    /// The newest store sequence reflected by the saved copies: merges and this context's own saves.
    private(set) var appliedSequence: UInt64 = 0
    /// Reads from the store in flight (their results are registered later, as of an older
    /// sequence): while any is, tables remember merged deletions.
    private var fetchesInFlight = 0

    init(registry: SchemaRegistry, identity: ContextIdentity, policy: MergePolicy, registersNew: Bool,
         keepsIndexes: Bool, valueCacheLimit: Int, startingAt sequence: UInt64) {
        self.registry = registry
        self.valueCacheLimit = valueCacheLimit
        self.identity = identity
        self.policy = policy
        self.registersNew = registersNew
        self.keepsIndexes = keepsIndexes
        self.mergedSequence = sequence
    }

    /// The table of `type`'s objects (created on first use).
    func table<E: Entity>(_ type: E.Type) throws -> EntityTable {
        try table(of: E.self)
    }

    private func table(of type: any Entity.Type) throws -> EntityTable {
        try table(of: type, named: type.entityName)
    }

    /// ``table(of:)`` when the caller has the type's entity name already (a save operation carries it).
    private func table(of type: any Entity.Type, named name: String) throws -> EntityTable {
        if let table = tables[name] {
            guard table.entityType == type else {
                throw StrataError(.unknownEntity, "entity name \(name) is used by two types", entity: name)
            }
            return table
        }
        let table = EntityTable(type: type, schema: try registry.schema(named: name), valueCacheLimit: valueCacheLimit)
        if keepsIndexes { try table.enableIndexes() }
        table.remembersDeletions = fetchesInFlight > 0
        if logsReads { table.readLog = [] }
        storedTables[name] = table
        return table
    }

    /// The table of `type`'s objects, for an edit: a table without edits takes its place in
    /// the order the next save writes its entities (``firstEdits``).
    func tableForEdit<E: Entity>(_ type: E.Type) throws -> EntityTable {
        let table = try table(of: E.self)
        if !table.hasEdits { stampFirstEdit(of: E.entityName) }
        return table
    }

    private func stampFirstEdit(of name: String) {
        editClock += 1
        firstEdits[name] = editClock
    }

    /// The tables holding unsaved edits, in the order of their first edits.
    private var editedTables: [EntityTable] {
        tables.filter { $0.value.hasEdits }
            .sorted { (firstEdits[$0.key] ?? 0, $0.key) < (firstEdits[$1.key] ?? 0, $1.key) }.map(\.value)
    }

    /// The table of the registered entity named `name`.
    func table(named name: String) throws -> EntityTable {
        if let table = tables[name] { return table }
        guard let type = registry.types.first(where: { $0.type.entityName == name })?.type else {
            throw StrataError(.unknownEntity, "entity \(name) was not registered with the store", entity: name)
        }
        return try table(of: type)
    }

    var hasChanges: Bool { tables.values.contains { $0.hasEdits } }

    /// The IDs of `type`'s conflicted edits, in ID order.
    func conflictingIDs<E: Entity>(_ type: E.Type) -> [E.ID] {
        (tables[E.entityName]?.conflictingIDs ?? []).compactMap(E.ID.fromDatabaseValue).sorted()
    }

    // MARK: Fetches in flight

    /// A read from the store starts whose result will be registered as of the sequence it was
    /// read at: until every such read has ended (``endFetch()``), deletions merged meanwhile are
    /// remembered so that the result cannot revive them; then they are forgotten, so memory
    /// stays bounded in a long-lived context.
    func beginFetch() {
        fetchesInFlight += 1
        if fetchesInFlight == 1 { for table in tables.values { table.remembersDeletions = true } }
    }

    func endFetch() {
        fetchesInFlight -= 1
        if fetchesInFlight == 0 { for table in tables.values { table.remembersDeletions = false } }
    }

    /// The deletions tables remember (for tests of the bound).
    var rememberedDeletionCount: Int { tables.values.reduce(0) { $0 + $1.rememberedDeletionCount } }

    // MARK: Merges prepared on a copy

    /// A number that moves whenever anything but a read changes the graph (its tables' rows,
    /// edits, indexes, or its merge policy). A copy that merged a change set replaces the graph
    /// only if the stamp is the one taken with the copy.
    var mutationStamp: UInt64 { tables.values.reduce(ownMutations) { $0 &+ $1.mutationCount } }

    /// A copy of the graph for a merge prepared off the owner's isolation: new tables sharing
    /// their storage with these until either side writes it (``EntityTable/init(copying:)``),
    /// which remember merged deletions. From now on this graph's tables log what is read, for
    /// ``adopt(_:)`` to replay.
    func preparationCopy() -> ObjectGraph {
        let copy = ObjectGraph(registry: registry, identity: identity, policy: policy, registersNew: registersNew,
                               keepsIndexes: keepsIndexes, valueCacheLimit: valueCacheLimit, startingAt: mergedSequence)
        copy.appliedSequence = appliedSequence
        // New tables the copy creates remember deletions too (see `table(of:)`).
        copy.fetchesInFlight = 1
        copy.storedTables = tables.mapValues(EntityTable.init(copying:))
        logReads(true)
        return copy
    }

    /// Starts or stops logging reads (``EntityTable/readLog``) in every table.
    func logReads(_ on: Bool) {
        logsReads = on
        for table in tables.values { table.readLog = on ? [] : nil }
    }

    /// Takes the tables of `prepared`, a ``preparationCopy()`` of this graph that has merged a
    /// change set since, and replays on them the reads this graph logged meanwhile. Only valid
    /// when nothing but reads changed this graph since the copy (the caller compares
    /// ``mutationStamp``). Tables this graph created meanwhile, which the copy lacks, stay (they
    /// are empty: filling one would have moved the stamp). Returns the tables replaced, for the
    /// caller to release elsewhere (freeing a large table takes a while).
    func adopt(_ prepared: ObjectGraph) -> [EntityTable] {
        var replaced: [EntityTable] = []
        for (name, table) in prepared.tables {
            if let old = tables[name] { table.replayReads(of: old) }
            table.remembersDeletions = fetchesInFlight > 0
            if let old = storedTables.updateValue(table, forKey: name) { replaced.append(old) }
        }
        logReads(false)
        mergedSequence = max(mergedSequence, prepared.mergedSequence)
        appliedSequence = max(appliedSequence, prepared.appliedSequence)
        return replaced
    }

    // MARK: Merging

    /// Merges one accepted change set. Change sets this context authored were applied when it
    /// saved, so they are skipped.
    func merge(sequence: UInt64, changes: ChangeSet) throws -> ContextChange? {
        guard sequence > mergedSequence else { return nil }
        mergedSequence = sequence
        appliedSequence = max(appliedSequence, sequence)
        if changes.author == identity { return nil }
        var result = ContextChange(origin: Self.origin(of: changes), sequence: sequence)
        let operations = changes.operations
        // The table and the entity's changes looked up once per run.
        for (name, run) in changes.entityRuns {
            // Saves of an entity the main context does not keep (`Residency.notKept`) update what
            // it holds and register nothing.
            let registers = registersNew && (try? registry.schema(named: name))?.residency != .notKept
            // A table is made for an entity the context did not hold only to register saved objects.
            let saves = registers && operations[run].contains(where: \.isSave)
            guard let table = saves ? try self.table(named: name) : tables[name] else { continue }
            var entityChanges = result.entities.removeValue(forKey: name) ?? .init()
            try table.merge(operations, run: run, sequence: sequence, isOwn: false, registersNew: registers,
                            policy: policy, into: &entityChanges)
            result.entities[name] = entityChanges
        }
        result.entities = result.entities.filter { !$0.value.isEmpty }
        return result
    }

    static func origin(of changes: ChangeSet) -> ContextChange.Origin {
        if changes.isOutside { return .remote }
        if let author = changes.author { return .context(author.name) }
        let bulk = changes.operations.allSatisfy {
            if case .save = $0 { return false }
            if case .delete = $0 { return false }
            return true
        }
        return bulk && !changes.isEmpty ? .bulkOperation : .store
    }

    // MARK: Saving

    /// Submits the unsaved edits as one change set, applies them to the saved copies at the
    /// sequence the store gave them, and returns the submission and the change to publish.
    ///
    /// `absorb` merges what is waiting in the context's mailbox (with `true`: also what is being
    /// merged off the main actor, at once); `unmerged` reads what is accepted but not merged.
    /// The store checks, under the lock that orders all submissions, that nothing accepted but
    /// not yet merged touches an object this save writes: otherwise the save would overwrite a
    /// change the context never saw (a lost update). Then the save merges and tries again.
    func save(to store: Store, author: String? = nil, absorb: (_ everything: Bool) -> Void,
              unmerged: @escaping @Sendable () -> [StoreEvent]) throws -> (Submission, ContextChange)? {
        guard atomicDepth == 0 else {
            // The block could still throw and undo edits that would already be in a change set.
            throw StrataError(.misuse, "save() was called inside atomically { }; save after the block returns")
        }
        for attempt in 0..<100 {
            // A retry merges everything accepted, even what is being prepared off the main actor.
            absorb(attempt > 0)
            do {
                return try saveOnce(to: store, author: author, unmerged: unmerged)
            } catch is StaleSave {
                continue
            }
        }
        throw StrataError(.busy, "could not save: other saves to the same objects kept arriving")
    }

    private struct StaleSave: Error {}

    private func saveOnce(to store: Store, author: String?,
                          unmerged: @escaping @Sendable () -> [StoreEvent]) throws -> (Submission, ContextChange)? {
        let conflicts = tables.values.flatMap(\.conflictingIDs)
        if !conflicts.isEmpty {
            throw StrataError(.conflict, "unsaved edits conflict with changes saved elsewhere: "
                              + conflicts.map(\.description).sorted().joined(separator: ", "),
                              objectID: conflicts.map(\.description).sorted().joined(separator: ","))
        }
        var changes = ChangeSet()
        changes.author = identity
        changes.transactionAuthor = author
        changes.policy = policy
        for table in editedTables { try table.appendEdits(to: &changes) }
        guard !changes.isEmpty else { return nil }
        // Nothing accepted but not merged may touch an object this save writes. The change sets
        // waiting now are checked here; under the store's lock, which every save waits for, only
        // those accepted since (none merges meanwhile: merging runs where this save runs). The
        // keys written are hashed only when some change set is waiting.
        let waiting = unmerged()
        var written = waiting.isEmpty ? nil : changes.touchedKeySets()
        var checkedThrough: UInt64 = 0
        for case .accepted(let sequence, let other) in waiting {
            if let written, other.touches(written) { throw StaleSave() }
            checkedThrough = max(checkedThrough, sequence)
        }
        let (submission, sealed) = try store.submit(changes, byMainContext: keepsIndexes) {
            for case .accepted(let sequence, let other) in unmerged() where sequence > checkedThrough {
                let keys = written ?? changes.touchedKeySets()
                written = keys
                if other.touches(keys) { throw StaleSave() }
            }
        }
        appliedSequence = max(appliedSequence, submission.sequence)
        var result = ContextChange(origin: .context(identity.name), sequence: submission.sequence)
        if keepsIndexes {
            // The main context: its observers and live queries get the save as a change.
            for (name, run) in sealed.entityRuns {
                guard let table = tables[name] else { continue }
                try table.merge(sealed.operations, run: run, sequence: submission.sequence, isOwn: true, registersNew: true,
                                policy: policy, into: &result.entities[name, default: .init()])
            }
        } else {
            // A worker: nobody observes it, so its copies take what it saved when next read.
            unappliedSaves.append((submission.sequence, sealed))
        }
        for table in storedTables.values { table.clearEdits() }
        result.entities = result.entities.filter { !$0.value.isEmpty }
        return (submission, result)
    }

    /// Applies the worker's own saves not yet applied (``unappliedSaves``) to its saved copies,
    /// in the order it made them.
    private func applyOwnSaves() {
        let saves = unappliedSaves
        unappliedSaves = []
        for (sequence, changes) in saves {
            let operations = changes.operations
            for (name, run) in changes.entityRuns {
                guard let table = storedTables[name] else { continue }
                // Room for the new objects, made once rather than by repeated doubling.
                table.reserve(forNew: operations[run].count { if case .save(let save) = $0 { save.mode == .upsert } else { false } })
                for index in run { table.applyOwnSave(operations[index], sequence: sequence) }
            }
        }
    }

    /// Drops the saved copies a change set touched (it failed at commit, so they may be wrong).
    func forget(touchedBy changes: ChangeSet) {
        for (entity, keys) in changes.touchedKeys() { tables[entity]?.forget(keys) }
    }

    /// Gives back the edits of this context's save `changes`, which failed because objects it
    /// wrote were changed from outside since they were read (``MergePolicy/reportConflict``):
    /// each operation becomes an unsaved edit again, those of `conflicts` marked as conflicted,
    /// so nothing the app saved is lost and it resolves them one by one. An object edited again
    /// since keeps its newer edit (marked when it conflicts). Only for this context's saves.
    func restoreEdits(of changes: ChangeSet, conflicts: [String: [DatabaseValue]]) throws {
        guard changes.author == identity, !conflicts.isEmpty else { return }
        for (name, run) in changes.entityRuns {
            let table = try table(named: name)
            if !table.hasEdits { stampFirstEdit(of: name) }
            let conflicted = Set(conflicts[name] ?? [])
            for operation in changes.operations[run] { table.restore(operation, conflicted: conflicted) }
        }
    }

    func rollback() {
        for table in tables.values { table.clearEdits() }
    }

    /// Runs `body`; if it throws, every edit it made is undone (a savepoint on the context).
    func atomically<T>(_ body: () throws -> T) rethrows -> T {
        let saved = tables.mapValues { $0.saveEditsState() }
        atomicDepth += 1
        defer { atomicDepth -= 1 }
        do {
            return try body()
        } catch {
            for (name, table) in tables { table.restoreEditsState(saved[name] ?? [:]) }
            throw error
        }
    }
}

extension ObjectGraph {
    /// Fills the entity's table with a block of objects (a snapshot's), as of `sequence`, with
    /// the table's indexes over it when they were built beforehand.
    func fill(_ block: ColumnBlock, asOf sequence: UInt64, prepared: EntityTable.PreparedIndexes? = nil) throws {
        try table(named: block.schema.name).fill(block, asOf: sequence, prepared: prepared)
    }
}

extension ObjectGraph {
    /// Settles every table's snapshot-order index (``EntityTable/settleOrder()``).
    func settleOrders() {
        for table in tables.values { table.settleOrder() }
    }
}
