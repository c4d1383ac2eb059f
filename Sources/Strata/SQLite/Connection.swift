import CSQLite
import Foundation

/// One SQLite connection.
///
/// Deliberately not `Sendable`: a connection is confined to the serial queue that owns it (the
/// root store's queue). It caches prepared statements by SQL and can report every statement it
/// runs to an observer (SQLite's `sqlite3_trace_v2`), which the tests use to assert on SQL.
final class Connection {
    let handle: OpaquePointer
    let path: String
    let publicArguments: Bool
    private var statementCache: [String: Statement] = [:]
    private var traceBox: Unmanaged<TraceBox>?
    /// The cancellation check SQLite's progress handler calls (see `Connection+Cancellation`).
    var cancellationBox: Unmanaged<CancellationBox>?
    var savepointDepth = 0
    /// Above zero while SQL written by the library's user is prepared (see `Connection+UserSQL`).
    var userSQLDepth = 0
    static let statementCacheLimit = 256

    struct Options {
        var readOnly = false
        /// `PRAGMA synchronous = FULL` (an fsync per commit) rather than `NORMAL`.
        var synchronousFull = false
        var busyTimeout: TimeInterval = 5
        var publicArguments = false
        var incrementalAutoVacuum = false
        /// The VFS to open the file with; nil for SQLite's default.
        var vfsName: String?
        /// `PRAGMA journal_size_limit` in bytes; nil leaves SQLite's default (no limit).
        var journalSizeLimit: Int?
        /// Open the file as immutable, read alone without locks or `-wal`/`-shm` (see `Connection+Immutable`).
        var immutable = false
    }

    /// Opens the file. `inspect` runs after the schema was read and before anything is written
    /// (journal mode, pragmas): a throwing check there leaves the file as it was.
    init(path: String, options: Options, inspect: ((Connection) throws -> Void)? = nil) throws {
        var db: OpaquePointer?
        let flags = (options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE | (options.immutable ? SQLITE_OPEN_URI : 0)
        let name = options.immutable ? Self.immutableURI(path) : path
        let code = options.vfsName.map { sqlite3_open_v2(name, &db, flags, $0) } ?? sqlite3_open_v2(name, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            var error = SQLiteResult.error(code: code, db: db, path: path)
            error.message = "cannot open the database: \(error.message)"
            sqlite3_close_v2(db)
            throw error
        }
        self.handle = db
        self.path = path
        self.publicArguments = options.publicArguments
        do {
            try configure(options, inspect: inspect)
        } catch var error as StrataError {
            close()
            error.path = path
            throw error
        }
    }

    private func configure(_ options: Options, inspect: ((Connection) throws -> Void)?) throws {
        try installAuthorizer()
        try check(sqlite3_busy_timeout(handle, Int32(options.busyTimeout * 1000)))
        // Reading the schema first makes a non-database file fail here, with a clear error.
        do {
            _ = try prepare("SELECT count(*) FROM sqlite_master", cached: false).rows()
        } catch var error as StrataError where error.code == .notADatabase {
            error.message = "the file is not an SQLite database"
            throw error
        }
        try inspect?(self)
        if options.readOnly { return }
        if options.incrementalAutoVacuum { try execute("PRAGMA auto_vacuum = INCREMENTAL") }
        let mode = try prepare("PRAGMA journal_mode = WAL", cached: false).rows().first?.first
        if mode != .text("wal") {
            throw StrataError(.sqlite, "cannot switch the database to WAL mode (got \(mode ?? .null))", path: path)
        }
        try execute("PRAGMA synchronous = \(options.synchronousFull ? "FULL" : "NORMAL")")
        if let limit = options.journalSizeLimit { try execute("PRAGMA journal_size_limit = \(max(-1, limit))") }
        try execute("PRAGMA foreign_keys = ON")
        // Statement journals — one for each statement that changes several rows inside a
        // savepoint, which is every change set's — stay in memory instead of spilling to a
        // temporary file: a 10,000-row UPDATE otherwise writes its old pages out a second time.
        try execute("PRAGMA temp_store = MEMORY")
    }

    deinit {
        close()
        traceBox?.release()
        cancellationBox?.release()
    }

    /// Whether ``close()`` ran: the handle is gone and nothing may use it.
    private(set) var isClosed = false

    /// Finalizes the cached statements and closes the handle, releasing the file and its locks
    /// (the last connection to a WAL file also checkpoints it and removes the -wal file). Safe to
    /// call twice; the connection must not be used afterwards.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    // MARK: Checked calls

    func check(_ code: Int32, sql: String? = nil, arguments: [DatabaseValue]? = nil) throws {
        try SQLiteResult.check(code, db: handle, sql: sql, arguments: redacted(arguments), path: path)
    }

    func error(code: Int32, sql: String?, arguments: [DatabaseValue]?) -> StrataError {
        SQLiteResult.error(code: code, db: handle, sql: sql, arguments: redacted(arguments), path: path)
    }

    private func redacted(_ arguments: [DatabaseValue]?) -> [DatabaseValue]? {
        publicArguments ? arguments : nil
    }

    // MARK: Statements

    /// Returns a prepared statement for `sql`, from the cache when `cached` (persistent prepare).
    func prepare(_ sql: String, cached: Bool = true) throws -> Statement {
        // User SQL is cached apart: it was authorized as user SQL when prepared, and must never
        // reuse one of Strata's own statements that the authorizer would have denied it.
        let key = userSQLDepth > 0 ? Self.userSQLKeyPrefix + sql : sql
        if cached, let statement = statementCache[key] { return statement }
        let statement = try Statement(connection: self, sql: sql, persistent: cached)
        if cached {
            // Bounded: SQL built from variable-length ID lists must not grow the cache forever.
            if statementCache.count >= Self.statementCacheLimit { statementCache.removeAll(keepingCapacity: true) }
            statementCache[key] = statement
        }
        return statement
    }

    /// Runs one or more SQL statements that return no rows.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        if code != SQLITE_OK {
            var error = self.error(code: code, sql: sql, arguments: nil)
            if let message { error.message = String(cString: message) }
            sqlite3_free(message)
            throw error
        }
    }

    /// Runs a single statement with arguments, through the statement cache.
    func execute(_ sql: String, _ arguments: [DatabaseValue]) throws {
        try prepare(sql).run(arguments)
    }

    /// All rows of a single statement.
    func rows(_ sql: String, _ arguments: [DatabaseValue] = [], cached: Bool = true) throws -> [[DatabaseValue]] {
        try prepare(sql, cached: cached).rows(arguments)
    }

    var changes: Int { Int(sqlite3_changes(handle)) }
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }
    /// The rowid of the last row inserted (`sqlite3_last_insert_rowid`); settable, so that a
    /// caller can tell whether a statement inserted anything.
    var lastInsertedRowID: Int64 {
        get { sqlite3_last_insert_rowid(handle) }
        set { sqlite3_set_last_insert_rowid(handle, newValue) }
    }

    /// The largest number of `?` parameters one statement may hold.
    var maxVariableCount: Int { Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1)) }

    // MARK: Tracing

    /// Reports the SQL of every statement as it starts running (`sqlite3_trace_v2`).
    func setTrace(_ observer: (@Sendable (String) -> Void)?) throws {
        guard let observer else {
            try check(sqlite3_trace_v2(handle, 0, nil, nil))
            traceBox?.release()
            traceBox = nil
            return
        }
        let box = Unmanaged.passRetained(TraceBox(observer))
        do {
            try installTrace(box)
        } catch {
            box.release()
            throw error
        }
        traceBox?.release()
        traceBox = box
    }

    private func installTrace(_ box: Unmanaged<TraceBox>) throws {
        try check(sqlite3_trace_v2(handle, UInt32(SQLITE_TRACE_STMT), { _, context, _, sqlPointer in
            guard let context, let sqlPointer else { return 0 }
            let sql = String(cString: sqlPointer.assumingMemoryBound(to: CChar.self))
            // Statements run by triggers are reported as "-- comment" lines: skip them.
            if !sql.hasPrefix("--") {
                Unmanaged<TraceBox>.fromOpaque(context).takeUnretainedValue().observer(sql)
            }
            return 0
        }, box.toOpaque()))
    }

    private final class TraceBox {
        let observer: @Sendable (String) -> Void
        init(_ observer: @escaping @Sendable (String) -> Void) { self.observer = observer }
    }
}
