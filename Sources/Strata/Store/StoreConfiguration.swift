import Foundation
import Logging

/// How a ``Store`` opens and runs its database. A value type with presets:
///
/// ```swift
/// var configuration = StoreConfiguration.durable   // synchronous=FULL
/// configuration.busyTimeout = 10
/// let store = try await Store.open(at: path, entities: [Article.self], configuration: configuration)
/// ```
public struct StoreConfiguration: Sendable {
    /// SQLite's `synchronous` setting in WAL mode.
    public enum Synchronous: String, Sendable {
        /// Commits survive a crash of the process; the last ones may be lost on power loss.
        case normal
        /// Commits also survive power loss, at the cost of an fsync per commit.
        case full
    }

    /// Defaults: WAL, `synchronous=NORMAL`, 5 s busy timeout, utility QoS.
    public static var `default`: StoreConfiguration { StoreConfiguration() }

    /// `synchronous=FULL`: every acknowledged save survives power loss.
    public static var durable: StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.synchronous = .full
        return configuration
    }

    /// How hard a commit waits for the disk (`PRAGMA synchronous`); `.normal` unless changed.
    public var synchronous: Synchronous = .normal
    /// How long a write waits for another connection's lock before reporting ``StrataError/Code/busy``.
    public var busyTimeout: TimeInterval = 5
    /// The schema version this app writes. A database recorded with a higher version refuses to open.
    public var schemaVersion: Int = 1
    /// For development only: when the declared entities are incompatible with the file
    /// (``StrataError/Code/incompatibleSchema``), delete the database (and its `-wal` and `-shm`
    /// files) and create an empty store instead of refusing to open. Every stored object is lost;
    /// the erasure is logged at error level with the refusal that caused it. Off by default, like
    /// GRDB's `eraseDatabaseOnSchemaChange`; never turn it on in a release build — and never while
    /// another process has the file open.
    public var erasesDatabaseOnIncompatibleSchema = false
    /// The quality of service of the store's serial queue (low priority by design).
    public var qualityOfService: DispatchQoS = .utility
    /// The first delay before retrying after a transient failure; it doubles up to ``maximumRetryDelay``.
    public var initialRetryDelay: TimeInterval = 0.05
    /// The longest delay between two retries after transient failures.
    public var maximumRetryDelay: TimeInterval = 5
    /// Whether errors may show statement arguments (they may hold user data).
    public var publicStatementArguments = false
    /// Whether the file reclaims free pages incrementally (`auto_vacuum=INCREMENTAL`, set at creation).
    public var incrementalVacuum = false
    /// The SQLite VFS to open the file with (`sqlite3_open_v2`'s zVfs); nil for the default.
    public var vfsName: String?
    /// The size in bytes the WAL file is cut back to when a checkpoint lets SQLite start it over
    /// (`PRAGMA journal_size_limit`); nil for SQLite's default, which never shrinks it while the
    /// database is open. Without a limit, a WAL that once grew (a long-lived reader kept
    /// checkpoints from resetting it, or one huge transaction) keeps its size on disk.
    public var journalSizeLimit: Int? = 8 * 1024 * 1024
    /// The history's size bound: how many change-log entries it keeps (a bulk operation or a
    /// run of one change set's inserts is one entry; another writer's row is one). Older
    /// transactions are pruned, whole, except those a registered history consumer has not read
    /// (``Store/registerHistoryConsumer(_:)``). A snapshot or a token older than the history can
    /// no longer catch up incrementally (``StrataError/Code/historyExpired``).
    public var changeLogLimit = 500_000
    /// The history's age bound: transactions committed longer ago than this many seconds are
    /// pruned (checked after commits, at most every minute, and by ``Store/pruneHistory()``),
    /// except those a registered history consumer has not read. Nil (the default) prunes by
    /// size alone.
    public var historyMaximumAge: TimeInterval?
    /// How many values the main context keeps built, per entity: reading a saved object again (by
    /// ID, or in a query's result) hands out the value built before instead of running the
    /// entity's `init(row:)` again, for as long as the object is unchanged. Beyond the limit the
    /// least recently read half is dropped; 0 builds every value on every read.
    ///
    /// A kept value costs memory beside its row (its strings, a `URL`'s storage), and keeping it
    /// makes the first read a little slower: lower the limit where memory is tight, raise it where
    /// the screens read the same objects over and over. Worker contexts keep none (they read
    /// objects to change them, once); ``QueryResults`` build their values on access and keep none.
    public var valueCacheLimit = 100_000
    /// Custom SQL functions registered on the connection.
    public var functions: [SQLFunction] = []
    /// Where Strata's diagnostics go: a swift-log `Logger` labelled `strata`, at level `.info`,
    /// writing through the handler the app's `LoggingSystem` chooses (standard error by default).
    ///
    /// Routine work is logged at `.debug`, so by default Strata is silent until something needs
    /// attention (see ``LogLevel``). To change only the level, set ``logLevel``; to send the
    /// messages elsewhere, assign a logger with your own handler.
    public var logger = Logger(label: "strata")
    /// Called with the SQL of every statement the store runs, on the store's queue. For tests and
    /// debugging: it sees exactly what reaches SQLite.
    public var statementObserver: (@Sendable (String) -> Void)?

    /// The defaults; the same as ``default``.
    public init() {}

    var connectionOptions: Connection.Options {
        var options = Connection.Options()
        options.synchronousFull = synchronous == .full
        options.busyTimeout = busyTimeout
        options.publicArguments = publicStatementArguments
        options.incrementalAutoVacuum = incrementalVacuum
        options.vfsName = vfsName
        options.journalSizeLimit = journalSizeLimit
        return options
    }
}
