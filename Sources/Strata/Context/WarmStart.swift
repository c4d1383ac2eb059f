import Foundation

/// How a warm start went. Every outcome is safe: anything but `.used` and `.caughtUp` ended in a
/// cold start from SQLite, and a snapshot is never partially loaded.
public enum SnapshotOutcome: Sendable, Hashable, CustomStringConvertible {
    /// Same store, same schema, same generation: the archive was used as is.
    case used
    /// The database was ahead: the objects the history says changed since were read and merged;
    /// `changes` counts the object changes read.
    case caughtUp(changes: Int)
    /// The archive was not used; the main context was loaded from SQLite. The error says why
    /// (``StrataError/snapshotRejection``) and what and where (``StrataError/message``).
    case coldStart(StrataError)

    /// A short description of the outcome, as logged: "used", "caught up (3 changes)", "cold start (…)".
    public var description: String {
        switch self {
        case .used: return "used"
        case .caughtUp(let changes): return "caught up (\(changes) changes)"
        case .coldStart(let error): return "cold start (\(error.message))"
        }
    }

    /// Whether the main context was filled from the archive (``used`` or ``caughtUp(changes:)``).
    public var usedSnapshot: Bool {
        if case .coldStart = self { return false }
        return true
    }

    /// Why the archive was not used; nil when it was.
    ///
    /// ```swift
    /// if warm.outcome.rejection == .schemaChanged { print("the entities changed since the snapshot") }
    /// ```
    public var rejection: SnapshotRejection? {
        if case .coldStart(let error) = self { return error.snapshotRejection }
        return nil
    }
}

/// The result of ``Store/openWarm(at:snapshot:entities:migrations:configuration:)``.
@MainActor
public struct WarmStart {
    /// The opened store.
    public let store: Store
    /// The store's main context, holding its data (from the archive, or from SQLite after a cold start).
    /// The same context as ``Store/mainContext``: the store keeps it until it closes.
    public let mainContext: MainContext
    /// Whether the archive was used, caught up, or refused (and why).
    public let outcome: SnapshotOutcome
    /// From the call to the moment the main context held its data.
    public let timeToData: Duration
    /// From the call to the moment the first screen was shown, when one was asked for
    /// (``Store/openWarm(at:snapshot:entities:migrations:configuration:firstScreen:showing:)``).
    public let timeToFirstScreen: Duration?
    /// Whether the first screen was shown from the archive's first chunk, before the main
    /// context was filled (otherwise it was shown from the filled main context).
    public let showedFirstScreenEarly: Bool
}

extension Store {
    /// Opens the store and fills its main context from a snapshot, falling back to SQLite.
    ///
    /// The snapshot is read, decompressed and decoded off the main actor while SQLite opens on
    /// the store's queue; both are cheap to check against each other (store identity, schema,
    /// generation), so the archive is validated before the main context shows any of it. Then:
    /// - same store, schema and generation → the archive is used as is;
    /// - the database is ahead → the objects changed since (from the history, which also
    ///   sees writes made outside Strata) are read and merged as a ``ContextChange/Origin/reload``;
    /// - anything else (missing, truncated, corrupt, another store, another schema, newer than
    ///   the database, change log pruned) → the main context loads its resident entities from SQLite.
    ///
    /// Each outcome is logged and returned.
    @MainActor
    public static func openWarm(
        at path: String, snapshot snapshotPath: String, entities: [any Entity.Type], migrations: [Migration] = [],
        configuration: StoreConfiguration = .default
    ) async throws -> WarmStart {
        try await openWarm(at: path, snapshot: snapshotPath, registry: try SchemaRegistry(entities), migrations: migrations,
                           configuration: configuration, firstScreen: nil)
    }

    /// ``openWarm(at:snapshot:entities:migrations:configuration:)`` that also shows the first
    /// screen of a list as soon as it can: `showing` is called once, on the main actor, with the
    /// results of `firstScreen` — before the main context is filled when the archive's first
    /// chunk decides them, otherwise from the filled main context before this returns.
    ///
    /// The archive keeps each entity's objects in its ``Entity/snapshotOrder``, and its first
    /// chunk holds the first thousand of them. The first chunk decides a query ordered exactly by
    /// that order (its filter evaluated in memory) whose window it fills, or any query when it
    /// holds the entity's every object. It is shown early
    /// only once it has been checked as the whole archive is — header CRC-32, the entity's schema
    /// fingerprint, the chunk's content checksum and every cell — and the store says the archive
    /// is current (same store, same generation, nothing to catch up): the results are then
    /// exactly what the main context answers once filled. A later chunk that turns out damaged
    /// makes the main context cold-start; what the first screen showed is what SQLite holds too.
    ///
    /// ```swift
    /// let unread = Query<Article>(where: Attribute("isRead") == false,
    ///                             sortedBy: [Attribute("published").descending], limit: 50)
    /// let start = try await Store.openWarm(at: path, snapshot: snapshotPath, entities: [Feed.self, Article.self],
    ///                                      firstScreen: unread) { articles in list.show(articles) }
    /// ```
    @MainActor
    public static func openWarm<E: Entity>(
        at path: String, snapshot snapshotPath: String, entities: [any Entity.Type], migrations: [Migration] = [],
        configuration: StoreConfiguration = .default, firstScreen: Query<E>,
        showing: @escaping @MainActor (QueryResults<E>) -> Void
    ) async throws -> WarmStart {
        try await openWarm(at: path, snapshot: snapshotPath, registry: try SchemaRegistry(entities), migrations: migrations,
                           configuration: configuration, firstScreen: FirstScreen(firstScreen, showing))
    }

    @MainActor
    private static func openWarm(
        at path: String, snapshot snapshotPath: String, registry: SchemaRegistry, migrations: [Migration],
        configuration: StoreConfiguration, firstScreen: FirstScreen?
    ) async throws -> WarmStart {
        let start = ContinuousClock.now
        // The first chunk is read first, on its own: the first screen waits for nothing else.
        var loader = SnapshotLoader(registry: registry)
        loader.logger = configuration.logger
        let firstChunk = firstScreen.map { [loader] screen in
            Task.detached(priority: .userInitiated) { loader.firstChunk(snapshotPath, of: screen.entity) }
        }
        // Off the main actor: read, decompress and check the archive, and build the main
        // context's in-memory indexes over it, so that filling the context is a hand-over.
        // With a first screen to show, the rest of the archive is read once it has been tried:
        // the first chunk and the store's open then have the cores to themselves.
        let decode = { [loader] in
            Task.detached(priority: .userInitiated) {
                switch loader.load(snapshotPath, indexingKeys: false) {
                case .failure(let error): return Result<(SnapshotLoader.Loaded, [EntityTable.PreparedIndexes]), StrataError>.failure(error)
                case .success(let loaded): return indexing(loaded)
                }
            }
        }
        var started = firstScreen == nil ? decode() : nil
        let (store, generation, floor): (Store, Int64, Int64)
        do {
            (store, generation, floor) = try await open(at: path, registry: registry, migrations: migrations,
                                                        configuration: configuration)
        } catch {
            started?.cancel()
            throw error
        }
        var shownAt: Duration?
        if let firstScreen, case .success(let chunk)? = await firstChunk?.value,
           chunk.header.fit(storeID: store.storeID, generation: generation, floor: floor) == .current,
           firstScreen.show(from: chunk) {
            shownAt = ContinuousClock.now - start
        }
        let decoding = started ?? decode()
        started = nil
        let main = store.mainContext
        var outcome: SnapshotOutcome
        switch await decoding.value {
        case .failure(let error):
            outcome = .coldStart(error)
        case .success(let (loaded, indexes)):
            let fit = loaded.header.fit(storeID: store.storeID, generation: generation, floor: floor)
            if case .rejected(let error) = fit {
                outcome = .coldStart(error.with(path: snapshotPath))
            } else {
                for (section, prepared) in zip(loaded.sections, indexes) {
                    try main.graph.fill(section.block, asOf: 0, prepared: prepared)
                }
                outcome = .used
                if fit == .behind {
                    let changes = try await main.catchUp(since: ChangeToken(generation: loaded.header.generation))
                    outcome = .caughtUp(changes: changes)
                }
            }
        }
        if case .coldStart = outcome { try await main.loadResidentEntities() }
        let elapsed = ContinuousClock.now - start
        let early = shownAt != nil
        if let firstScreen, !early {
            try firstScreen.show(from: main)
            shownAt = ContinuousClock.now - start
        }
        store.logger.debug("warm start", metadata: ["outcome": "\(outcome)", "snapshot": "\(snapshotPath)",
                                                   "elapsed": "\(elapsed)", "first screen": "\(shownAt.map { "\($0)" } ?? "none")",
                                                   "first screen early": "\(early)"])
        return WarmStart(store: store, mainContext: main, outcome: outcome, timeToData: elapsed, timeToFirstScreen: shownAt,
                         showedFirstScreenEarly: early)
    }
}

extension Store {
    /// The keys of a loaded snapshot's blocks and the main context's in-memory indexes over them,
    /// built in parallel (``Parallel``: one job per block's keys and per index, a section's keys
    /// first): the work between decompressing the archive and handing it to the main context.
    fileprivate static func indexing(_ loaded: SnapshotLoader.Loaded)
        -> Result<(SnapshotLoader.Loaded, [EntityTable.PreparedIndexes]), StrataError> {
        enum Built: Sendable {
            case keys(Int, LoadedSection)
            case index(Int, EntityTable.PreparedIndexes.Part)
        }
        var jobs: [@Sendable () throws -> Built] = []
        for (number, section) in loaded.sections.enumerated() {
            jobs.append { .keys(number, try SnapshotLoader.indexKeys(section)) }
            jobs += EntityTable.PreparedIndexes.jobs(of: section.block.schema, over: section.block).map { job in
                { .index(number, try job()) }
            }
        }
        do {
            var sections = loaded.sections
            var parts = [[EntityTable.PreparedIndexes.Part]](repeating: [], count: sections.count)
            for built in try Parallel.run(jobs) {
                switch built {
                case .keys(let number, let section): sections[number] = section
                case .index(let number, let part): parts[number].append(part)
                }
            }
            return .success((SnapshotLoader.Loaded(header: loaded.header, sections: sections),
                             parts.map(EntityTable.PreparedIndexes.init)))
        } catch let error as StrataError where error.snapshotRejection != nil {
            return .failure(error)
        } catch {
            return .failure(.snapshot(.undecodable, "the main context's indexes cannot be built: \(error)"))
        }
    }
}

extension MainContext {
    /// Re-reads every object changed in the store since `token` and merges it (resident
    /// entities: all changes; others: the objects the context holds). Publishes one change with
    /// origin ``ContextChange/Origin/reload``. Returns the number of object changes read.
    ///
    /// Reads the store's history (``Store/history(since:entities:authors:excludingAuthors:pageSize:)``,
    /// a page of transactions at a time) and keeps each object's last operation per entity: memory
    /// is bounded by the objects changed, not by the history.
    func catchUp(since token: ChangeToken) async throws -> Int {
        var last: [String: [DatabaseValue: LoggedChange.Operation]] = [:]
        var count = 0
        for try await transaction in store.history(since: token) {
            for change in transaction.changes {
                count += change.ids.count
                for id in change.ids { last[change.entity, default: [:]][id] = change.operation }
            }
        }
        var change = ContextChange(origin: .reload, sequence: graph.mergedSequence)
        for entity in store.registry.types {
            try await reload(entity.type, last[entity.type.entityName] ?? [:], into: &change)
        }
        change.entities = change.entities.filter { !$0.value.isEmpty }
        if !change.isEmpty { publish(change) }
        return count
    }

    /// Re-reads one entity's objects that `operations` last inserted or updated, and removes
    /// those it last deleted.
    private func reload<E: Entity>(_ type: E.Type, _ operations: [DatabaseValue: LoggedChange.Operation],
                                   into change: inout ContextChange) async throws {
        guard !operations.isEmpty else { return }
        let table = try graph.table(E.self)
        let ids = operations.compactMap { $0.value == .delete ? nil : E.ID.fromDatabaseValue($0.key) }
            .filter { table.schema.isResident || table.visibleRow($0.databaseValue) != nil }
        let deleted = operations.compactMap { $0.value == .delete ? E.ID.fromDatabaseValue($0.key) : nil }
        try await reread(E.self, ids: ids, deleted: deleted, into: &change)
    }

    /// Reads `ids` again from the store — in chunks the connection's variable limit allows — and
    /// applies them as a ``ContextChange/Origin/reload``: copies replaced, `deleted` and any of
    /// `ids` the store no longer has removed (resident entities also gain objects they lacked).
    /// The one re-read of catch-up and of corrections after a failed save.
    func reread<E: Entity>(_ type: E.Type, ids: [E.ID], deleted: [E.ID] = [], into change: inout ContextChange) async throws {
        let table = try graph.table(E.self)
        graph.beginFetch()
        defer { graph.endFetch() }
        var rows: [[DatabaseValue]] = []
        var sequence = graph.mergedSequence
        let limit = try await store.onQueue { writer in writer.variableLimit }
        let size = max(1, min(Self.rereadChunk, limit))
        for start in stride(from: 0, to: ids.count, by: size) {
            let chunk = Array(ids[start..<min(ids.count, start + size)])
            let fetched = try await store.fetchSnapshot(Query<E>(where: Attribute(table.schema.primaryKey.name).in(chunk)))
            rows += (0..<fetched.block.count).map(fetched.block.row(at:))
            sequence = max(sequence, fetched.sequence)
        }
        mergePending()
        let key = table.schema.primaryKeyIndex
        let found = Set(rows.map { $0[key] })
        let gone = deleted.map(\.databaseValue) + ids.map(\.databaseValue).filter { !found.contains($0) }
        try table.reload(rows, deleted: gone, asOf: sequence,
                         includeNew: table.schema.isResident, policy: graph.policy, into: &change.entities[E.entityName, default: .init()])
    }

    /// The most IDs one re-read statement binds (fewer when the connection allows fewer).
    static let rereadChunk = 10_000
}
