import Foundation
import Logging

/// The root store: owns the SQLite database and persists change sets on a low-priority serial
/// queue.
///
/// ```swift
/// let store = try await Store.open(at: "/path/reader.sqlite", entities: [Feed.self, Article.self])
/// var changes = ChangeSet()
/// changes.insert(article)
/// try store.submit(changes)                  // returns at once; nothing waits for disk
/// let unread = try await store.fetch(Query<Article>(where: Attribute("isRead") == false))
/// try await store.persist()                  // everything submitted so far is committed
/// ```
///
/// Every SQLite call runs on the store's serial queue (utility QoS by default), never on the
/// caller's thread. Change sets submitted back to back coalesce into one transaction, each in a
/// savepoint of its own: a change set that fails permanently (a constraint, an unknown object)
/// fails alone and its submitter learns it; a transient failure (busy, disk full, I/O error)
/// keeps every pending change and retries with backoff. Fetches see every change set submitted
/// before them, committed or not.
public final class Store: Sendable {
    /// The database file.
    public let path: String
    /// The store's identity, created with the database file and kept in it.
    public let storeID: UUID
    /// Whether this open created the database file's schema.
    public let wasCreated: Bool
    /// The migrations (named and automatic) that ran during this open.
    public let appliedMigrations: [String]

    let configuration: StoreConfiguration
    let registry: SchemaRegistry
    let queue: DispatchQueue
    let writer: QueueConfined<Writer>
    let pipeline = Locked(PipelineState())
    /// The main context, once made: owned by the store until ``close()`` (``Store/mainContext``
    /// is `Context/`'s).
    let mainContextSlot = Locked(OwnedObject())
    /// Watches the file for other processes' commits while the store is open (`Store+OutsideWatch`).
    let outsideWatcher = Locked<FileWatcher?>(nil)
    var logger: Logger { configuration.logger }

    private init(path: String, outcome: SchemaMigrator.Outcome, configuration: StoreConfiguration,
                 registry: SchemaRegistry, queue: DispatchQueue, writer: QueueConfined<Writer>) {
        self.path = path
        self.storeID = outcome.storeID
        self.wasCreated = outcome.isNew
        self.appliedMigrations = outcome.applied
        self.configuration = configuration
        self.registry = registry
        self.queue = queue
        self.writer = writer
    }

    /// Opens (or creates) the database at `path` and brings its schema up to date.
    ///
    /// The work — `sqlite3_open_v2`, WAL setup, migrations — runs on the store's queue.
    ///
    /// A missing file, a zero-length file and an SQLite database without any table (SQLite's
    /// own view of an empty file) become a new store. Any other SQLite database that is not a
    /// Strata store (another application's tables) is refused with `.notADatabase` before
    /// anything is written: the file is left byte for byte as it was.
    /// - Parameters:
    ///   - path: The database file. Its directory must exist.
    ///   - entities: Every entity type the store holds.
    ///   - migrations: Named migrations, in the order they must run.
    ///   - configuration: Durability, timeouts, logging.
    /// - Throws: ``StrataError`` — `.cannotOpen` (missing directory, no permission),
    ///   `.notADatabase` (not SQLite, or another application's database), `.newerSchema`,
    ///   `.migrationFailed`, `.unsupportedAttribute`.
    public static func open(
        at path: String, entities: [any Entity.Type], migrations: [Migration] = [],
        configuration: StoreConfiguration = .default
    ) async throws -> Store {
        try await open(at: path, registry: SchemaRegistry(entities), migrations: migrations, configuration: configuration).store
    }

    /// ``open(at:entities:migrations:configuration:)`` with the entities' schemas already reflected.
    /// Opens the store; returns it with the change log's generation and floor as they were at
    /// open (one round trip to the store's queue, which a warm start checks its archive against).
    static func open(at path: String, registry: SchemaRegistry, migrations: [Migration],
                     configuration: StoreConfiguration) async throws -> (store: Store, generation: Int64, floor: Int64) {
        let queue = DispatchQueue(label: "strata.store", qos: configuration.qualityOfService)
        queue.markIdentity()
        // One round trip to the queue: the file opened and migrated, and the change log's
        // generation and floor read there too (a warm start waits for them before it loads).
        let (writer, outcome, generation, floor) = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<(QueueConfined<Writer>, SchemaMigrator.Outcome, Int64, Int64), Error>) in
            queue.async {
                continuation.resume(with: Result {
                    func openAndMigrate() throws -> (Connection, SchemaMigrator.Outcome) {
                        let connection = try Connection(path: path, options: configuration.connectionOptions,
                                                        inspect: SchemaMigrator.refuseForeignDatabase)
                        try connection.setTrace(configuration.statementObserver)
                        for function in configuration.functions { try connection.register(function) }
                        let migrator = SchemaMigrator(schemas: registry.schemas, migrations: migrations,
                                                      schemaVersion: configuration.schemaVersion, logger: configuration.logger)
                        return (connection, try migrator.migrate(connection))
                    }
                    let connection: Connection, outcome: SchemaMigrator.Outcome
                    do {
                        (connection, outcome) = try openAndMigrate()
                    } catch let refusal as StrataError
                        where refusal.code == .incompatibleSchema && configuration.erasesDatabaseOnIncompatibleSchema {
                        configuration.logger.error("erasing the store: its schema is incompatible with the entities (StoreConfiguration.erasesDatabaseOnIncompatibleSchema)",
                                                   metadata: ["path": "\(path)", "refusal": "\(refusal)"])
                        try Self.eraseFiles(at: path)
                        (connection, outcome) = try openAndMigrate()
                    }
                    let generation = try ChangeLog.generation(connection), floor = try ChangeLog.floor(connection)
                    let writer = Writer(connection: connection, registry: registry, fileIdentity: FileIdentity.of(path))
                    return (QueueConfined(writer, queue: queue), outcome,
                            generation, floor)
                })
            }
        }
        configuration.logger.debug("opened store", metadata: ["path": "\(path)", "created": "\(outcome.isNew)"])
        let store = Store(path: path, outcome: outcome, configuration: configuration, registry: registry,
                          queue: queue, writer: writer)
        // Until this store commits, what it reads reflects the generation the file is at: a
        // snapshot written before the first commit must claim that one, not 0 (which would make
        // the next warm start re-read every logged change).
        store.pipeline.withLock { $0.committedGeneration = max($0.committedGeneration, generation) }
        store.watchOutsideCommits()
        return (store, generation, floor)
    }

    /// Deletes a database file and its WAL and shared-memory files (those that exist).
    private static func eraseFiles(at path: String) throws {
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] where FileManager.default.fileExists(atPath: file) {
            do {
                try FileManager.default.removeItem(atPath: file)
            } catch {
                throw StrataError(.cannotOpen, "cannot erase \(file) after an incompatible schema: \(error.localizedDescription)",
                                  path: path)
            }
        }
    }

    /// The schemas of the registered entities.
    public var schemas: [EntitySchema] { registry.schemas }

    /// The schema of one registered entity.
    public func schema<E: Entity>(of type: E.Type) throws -> EntitySchema { try registry.schema(for: type) }

    /// Runs `body` on the store's queue with the writer.
    /// - Throws: `.closed` after ``close()`` closed the connection.
    func onQueue<T: Sendable>(_ body: @escaping @Sendable (Writer) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.withOpenWriter(body) })
            }
        }
    }

    /// Runs `body` with the writer, on the queue, unless the connection was closed.
    func withOpenWriter<T>(_ body: (Writer) throws -> T) throws -> T {
        try writer.run { writer in
            guard !writer.connection.isClosed else {
                throw StrataError(.closed, "the store at \(path) is closed", path: path)
            }
            try checkNotReplaced(writer)
            return try body(writer)
        }
    }

    /// Throws `.fileReplaced` when the store's path no longer names the file its connection opened:
    /// a commit or a read would then go to a file nobody else sees, or see data the file at the
    /// path no longer holds.
    private func checkNotReplaced(_ writer: Writer) throws {
        guard let opened = writer.fileIdentity, FileIdentity.of(path) != opened else { return }
        throw StrataError(.fileReplaced, """
            the database file at \(path) was replaced or removed while this store had it open: nothing is \
            committed to or read from the file it opened; close the store and open it again
            """, path: path)
    }

    /// Whether the caller is running on the store's queue (inside a ``read(_:)`` or ``write(_:)``
    /// closure, a migration or a custom SQL function).
    var isOnQueue: Bool { writer.queue.isCurrent }
}

extension DispatchQueue {
    private static let identityKey = DispatchSpecificKey<ObjectIdentifier>()

    /// Tags the queue so that ``isCurrent`` can recognize it. Call once, at creation.
    func markIdentity() { setSpecific(key: Self.identityKey, value: ObjectIdentifier(self)) }

    /// Whether the current code runs on this queue (which must have been marked).
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.identityKey) == ObjectIdentifier(self) }
}
