import CFaultVFS
import Foundation
@testable import Strata
import StrataTestSupport
import Testing

// What FaultInjectionTests stand on: the fault VFS from Swift, a committed baseline copied fresh
// for every fault, bounded waits, and the second process.

// MARK: - The fault VFS, from Swift

enum FaultKind: Int32, CaseIterable, CustomStringConvertible {
    case read, write, sync

    var raw: Int32 {
        switch self {
        case .read: Int32(STRATA_FAULT_READ)
        case .write: Int32(STRATA_FAULT_WRITE)
        case .sync: Int32(STRATA_FAULT_SYNC)
        }
    }
    /// The I/O error that matches the operation.
    var ioErrorCode: Int32 {
        switch self {
        case .read: Int32(STRATA_FAULT_SQLITE_IOERR_READ)
        case .write: Int32(STRATA_FAULT_SQLITE_IOERR_WRITE)
        case .sync: Int32(STRATA_FAULT_SQLITE_IOERR_FSYNC)
        }
    }
    var description: String { ["read", "write", "sync"][Int(rawValue)] }
}

let sqliteFull = Int32(STRATA_FAULT_SQLITE_FULL)

func codeName(_ code: Int32) -> String {
    switch code {
    case Int32(STRATA_FAULT_SQLITE_FULL): "SQLITE_FULL"
    case Int32(STRATA_FAULT_SQLITE_IOERR_READ): "SQLITE_IOERR_READ"
    case Int32(STRATA_FAULT_SQLITE_IOERR_WRITE): "SQLITE_IOERR_WRITE"
    case Int32(STRATA_FAULT_SQLITE_IOERR_FSYNC): "SQLITE_IOERR_FSYNC"
    default: "\(code)"
    }
}

let faultVFSName: String = {
    let rc = strata_fault_register()
    precondition(rc == 0, "cannot register the fault VFS: SQLite result \(rc)")
    return String(cString: strata_fault_vfs_name())
}()

/// A class of file, as the fault VFS tells them apart (from SQLite's open flags).
enum FaultFile: Int32, CaseIterable, CustomStringConvertible {
    case any = -1, database = 0, wal = 1, statementJournal = 2, other = 3

    static var files: [FaultFile] { [.database, .wal, .statementJournal, .other] }
    var description: String {
        switch self {
        case .any: "any file"
        case .database: "db"
        case .wal: "wal"
        case .statementJournal: "stmt-journal"
        case .other: "other"
        }
    }
}

/// The calls one piece of work made through the fault VFS.
struct IOCounts: Equatable, CustomStringConvertible {
    /// counts[kind][file]
    var counts: [[Int64]]

    static func current() -> IOCounts {
        IOCounts(counts: FaultKind.allCases.map { kind in FaultFile.files.map { strata_fault_count_in(kind.raw, $0.rawValue) } })
    }
    func count(_ kind: FaultKind, in file: FaultFile = .any) -> Int64 {
        let row = counts[Int(kind.rawValue)]
        return file == .any ? row.reduce(0, +) : row[Int(file.rawValue)]
    }
    var description: String {
        FaultKind.allCases.map { kind in
            "\(count(kind)) \(kind)s (" + FaultFile.files.map { "\($0) \(count(kind, in: $0))" }.joined(separator: ", ") + ")"
        }.joined(separator: "; ")
    }
}

/// One fault of the sweep.
struct FaultPoint: CustomStringConvertible, Hashable {
    var kind: FaultKind
    var file: FaultFile
    var n: Int64
    var persistent: Bool
    var code: Int32

    var expectedError: StrataError.Code { code == sqliteFull ? .diskFull : .ioError }
    var description: String { "\(kind) #\(n) of \(file) \(persistent ? "persistent" : "once") \(codeName(code))" }
}

/// The store's statement observer: when a transaction begins after a fault was injected (the
/// store's retry), the VFS stops injecting and starts holding — every write and fsync fails with
/// the fault's code — so the retry cannot commit before the test has looked at the state the
/// fault left. Runs on the store's queue, before BEGIN touches the file.
final class HoldOnRetry: Sendable {
    let code: Int32
    private let log = Locked([String]())

    init(code: Int32) { self.code = code }

    var observer: @Sendable (String) -> Void {
        { [self] sql in
            log.withLock { $0.append(sql) }
            if sql == "BEGIN IMMEDIATE TRANSACTION" { _ = strata_fault_hold_if_injected(code) }
        }
    }
    var statements: [String] { log.withLock { $0 } }
}

// MARK: - Fixture: a committed baseline, copied fresh for every fault

let baselineArticles = (0..<50).map { Article.make($0) }
let batchArticles = (1_000..<1_200).map { index in
    var article = Article.make(index, read: index % 2 == 0)
    article.summary = "Fault sweep article \(index) " + String(repeating: "lorem ipsum ", count: 8)
    return article
}
let allArticles = (baselineArticles + batchArticles).sorted { $0.id < $1.id }

func changeSet(_ articles: some Sequence<Article>) -> ChangeSet {
    var changes = ChangeSet()
    for article in articles { changes.insert(article) }
    return changes
}

final class FaultFixture {
    let directory: TemporaryDirectory
    let template: String
    let synchronous: StoreConfiguration.Synchronous
    /// `PRAGMA wal_autocheckpoint` for the store under test: small enough that the save's own
    /// commit runs a checkpoint (database writes and fsyncs after the commit). nil: SQLite's 1000.
    let autocheckpoint: Int?
    private var copies = 0

    /// A database holding `baselineArticles`, checkpointed, so that a copy of the main file is
    /// the whole database and every copy starts the same I/O from the same state.
    init(synchronous: StoreConfiguration.Synchronous = .normal, autocheckpoint: Int? = nil) async throws {
        _ = faultVFSName
        directory = try TemporaryDirectory()
        template = directory.path("template.sqlite")
        self.synchronous = synchronous
        self.autocheckpoint = autocheckpoint
        let store = try await openStore(template)
        try await store.submit(changeSet(baselineArticles)).committed()
        let result = try await store.checkpoint(.truncate)
        precondition(!result.wasBlocked)
    }

    func freshCopy() throws -> String {
        copies += 1
        let path = directory.path("copy-\(copies).sqlite")
        try FileManager.default.copyItem(atPath: template, toPath: path)
        return path
    }

    /// Removes a copy once its test is done (hundreds of copies would otherwise pile up).
    func remove(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    func configuration(_ hold: HoldOnRetry?) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.vfsName = faultVFSName
        configuration.synchronous = synchronous
        configuration.initialRetryDelay = 0.001
        configuration.maximumRetryDelay = 0.004
        configuration.statementObserver = hold?.observer
        configuration.logger.logLevel = .critical   // a retry warning per attempt would drown the output
        return configuration
    }

    /// Opens the store under test through the fault VFS, in a new epoch of the VFS, and empties
    /// the WAL: opening may or may not write a frame (the migrator rewrites `strata_entities`
    /// with schema JSON whose key order varies), and the save's I/O must not depend on it.
    func open(_ path: String, configuration: StoreConfiguration) async throws -> Store {
        strata_fault_new_epoch()
        let store = try await Store.open(at: path, entities: [Article.self, Feed.self], configuration: configuration)
        if let autocheckpoint {
            try await store.onQueue { writer in try writer.connection.execute("PRAGMA wal_autocheckpoint = \(autocheckpoint)") }
        }
        let truncated = try await store.checkpoint(.truncate)
        try #require(!truncated.wasBlocked && fileSize(path + "-wal") == 0, "the WAL of a fresh copy could not be emptied")
        return store
    }

    func open(_ path: String, hold: HoldOnRetry?) async throws -> Store {
        try await open(path, configuration: configuration(hold))
    }

    /// The calls one save of `batchArticles` makes, on a fresh copy.
    func measureSave() async throws -> IOCounts {
        strata_fault_disarm()
        let path = try freshCopy()
        defer { remove(path) }
        let store = try await open(path, hold: nil)
        strata_fault_reset_counts()
        try store.submit(changeSet(batchArticles))
        try await store.persist()
        let counts = IOCounts.current()
        try await verifyCommitted(store, path: store.path, context: "measuring run")
        return counts
    }
}

/// Distinct positions in 1...limit, ascending.
func positions(_ candidates: [Int64], upTo limit: Int64) -> [Int64] {
    Set(candidates.filter { $0 >= 1 && $0 <= limit }).sorted()
}

/// What the committed file holds, read through a fresh connection on SQLite's default VFS (not
/// the store's page cache).
func committedArticleCount(_ path: String) throws -> Int {
    let connection = try Connection(path: path, options: { var options = Connection.Options(); options.readOnly = true; return options }())
    let value = try connection.rows("SELECT count(*) FROM articles", cached: false).first?.first
    return Int.fromDatabaseValue(value ?? .null) ?? -1
}

/// Everything is committed exactly once, the baseline intact, the file sound.
func verifyCommitted(_ store: Store, path: String, context: String) async throws {
    #expect(store.pendingCount == 0, "\(context): changes still pending")
    #expect(try await store.integrityProblems().isEmpty, "\(context): integrity check failed")
    // Sorted by primary key: equal arrays mean every row present exactly once, with its values.
    let stored = try await store.fetch(Query<Article>())
    #expect(stored == allArticles, "\(context): \(stored.count) rows stored, \(allArticles.count) expected, or values differ")
    #expect(try committedArticleCount(path) == allArticles.count, "\(context): the file does not hold every row")
}

// MARK: - Bounded waits

/// Every failure already published on `stream`. A failure is yielded before the attempt's waiters
/// resume, so by the time the work that caused it returned it is buffered and `next()` returns it
/// at once; the short bound only ends the wait once the buffer is empty.
func publishedFailures(_ stream: AsyncStream<StrataError>) async -> [StrataError] {
    var collected: [StrataError] = []
    while collected.count < 256, let failure = await next(stream, within: 0.3) { collected.append(failure) }
    return collected
}

/// What `body` returned or threw.
func outcome(_ body: () async throws -> Void) async -> Result<Void, Error> {
    do {
        try await body()
        return .success(())
    } catch {
        return .failure(error)
    }
}

/// Calls `persist()` until it succeeds. After a hold ends, one attempt that began during the hold
/// may still fail, with the fault's own (transient) error; anything else is a test failure.
func persistAfterRelease(_ store: Store, expected: StrataError.Code, _ context: String) async throws {
    for _ in 0..<20 {
        do {
            try await store.persist()
            return
        } catch let error as StrataError where error.code == expected && error.isTransient {
            continue
        }
    }
    Issue.record("\(context): persist() kept failing after the fault was removed")
}

// MARK: - Two processes

/// The entity the probe process writes (`Sources/StrataProbe/TwoProcessWriter.swift`): same name,
/// same attributes, so both processes agree on the schema.
struct TwoProcessNote: Entity, Equatable {
    var id: String
    var writer: String
    var index: Int64
    var body: String
}

/// The WAL test's entity: small rows, so that each commit adds few pages.
struct WalTick: Entity, Equatable {
    var id: Int64
    var value: String
}

/// The same work as the probe's `writeTwoProcessNotes`, in this process.
/// `halfway`, when given, runs after the first half of the change sets is committed (the
/// two-process test's handshake with the probe).
func writeNotes(_ store: Store, writer: String, count: Int,
                halfway: () async -> Void = {}) async -> (errors: [String], first: Double, last: Double) {
    var errors: [String] = []
    var first: Double?
    var last = 0.0
    for index in 0..<count {
        if index == count / 2 { await halfway() }
        var changes = ChangeSet()
        changes.insert(TwoProcessNote(id: "\(writer)-\(index)", writer: writer, index: Int64(index),
                                      body: String(repeating: "\(index % 10)", count: 120)))
        if index % 10 == 0 {
            changes.upsert(TwoProcessNote(id: "shared", writer: writer, index: Int64(index), body: "last writer"))
        }
        do {
            try await store.submit(changes).committed()
            let now = Date().timeIntervalSince1970
            if first == nil { first = now }
            last = now
            if index % 25 == 0 { _ = try await store.count(Query<TwoProcessNote>()) }
        } catch {
            errors.append("\(error)")
        }
    }
    do { try await store.persist() } catch { errors.append("\(error)") }
    return (errors, first ?? 0, last)
}

/// The size of a file in bytes (0 when it does not exist).
func fileSize(_ path: String) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
}
