import Foundation

/// One row of SQLite's `EXPLAIN QUERY PLAN` output.
public struct QueryPlanStep: Sendable, Hashable, CustomStringConvertible {
    /// The step's ID, which children name as their ``parent``.
    public let id: Int
    /// The ID of the step this one belongs to (0 for a top-level step).
    public let parent: Int
    /// SQLite's description, e.g. `SEARCH articles USING INDEX articles_feedID_read (feedID=?)`.
    public let detail: String
    /// The ``detail``.
    public var description: String { detail }
}

/// How hard a WAL checkpoint tries (`sqlite3_wal_checkpoint_v2` modes).
public enum CheckpointMode: String, Sendable {
    /// Copies what it can without waiting for readers or writers.
    case passive = "PASSIVE"
    /// Waits for writers, then copies every frame (readers may still block the reset).
    case full = "FULL"
    /// Like ``full``, then waits for readers so that the next writer starts the WAL over.
    case restart = "RESTART"
    /// Like ``restart``, and truncates the WAL file to zero bytes.
    case truncate = "TRUNCATE"
}

/// What a WAL checkpoint did.
public struct CheckpointResult: Sendable, Hashable {
    /// Whether a reader or writer kept the checkpoint from finishing.
    public let wasBlocked: Bool
    /// Frames in the WAL file.
    public let logFrames: Int
    /// Frames copied back into the database file.
    public let checkpointedFrames: Int
}

extension Connection {
    /// `PRAGMA integrity_check` of the database `schema` (`main`, or an attached one): an empty
    /// array means the file is sound.
    ///
    /// On a damaged file SQLite reports what it found and may then stop at a page it cannot read
    /// (`SQLITE_CORRUPT`): the rows already reported are kept and the stop is one more problem,
    /// rather than an error that would hide them.
    func integrityProblems(in schema: String = "main") throws -> [String] {
        let statement = try prepare("PRAGMA \(schema.quotedIdentifier).integrity_check", cached: false)
        defer { statement.reset() }
        var messages: [String] = []
        do {
            while try statement.step() {
                if case .text(let text) = statement.value(at: 0) { messages.append(text) }
            }
        } catch let error as StrataError where error.code == .corrupt {
            messages.append("the check stopped early: \(error.message)")
        }
        return messages == ["ok"] ? [] : messages
    }

    /// `PRAGMA foreign_key_check`: one line per violation.
    func foreignKeyProblems() throws -> [String] {
        try rows("PRAGMA foreign_key_check", cached: false).map { row in
            row.map(\.description).joined(separator: " ")
        }
    }

    func checkpoint(_ mode: CheckpointMode) throws -> CheckpointResult {
        let row = try rows("PRAGMA wal_checkpoint(\(mode.rawValue))", cached: false).first ?? []
        func int(_ index: Int) -> Int {
            if index < row.count, case .integer(let value) = row[index] { return Int(value) }
            return 0
        }
        return CheckpointResult(wasBlocked: int(0) != 0, logFrames: int(1), checkpointedFrames: int(2))
    }

    func explainQueryPlan(_ sql: String, _ arguments: [DatabaseValue]) throws -> [QueryPlanStep] {
        try rows("EXPLAIN QUERY PLAN " + sql, arguments, cached: false).map { row in
            func int(_ index: Int) -> Int {
                if case .integer(let value) = row[index] { return Int(value) }
                return 0
            }
            var detail = ""
            if case .text(let text) = row[3] { detail = text }
            return QueryPlanStep(id: int(0), parent: int(1), detail: detail)
        }
    }

    /// The number of pages in the file and on its freelist.
    func pageCounts() throws -> (total: Int, free: Int) {
        func pragma(_ name: String) throws -> Int {
            if case .integer(let value)? = try rows("PRAGMA \(name)", cached: false).first?.first { return Int(value) }
            return 0
        }
        return (try pragma("page_count"), try pragma("freelist_count"))
    }
}
