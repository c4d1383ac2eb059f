import Foundation

/// One row of SQLite's `EXPLAIN QUERY PLAN` output.
public struct QueryPlanStep: Sendable, Hashable, CustomStringConvertible {
    public let id: Int
    public let parent: Int
    /// SQLite's description, e.g. `SEARCH articles USING INDEX articles_feedID_read (feedID=?)`.
    public let detail: String
    public var description: String { detail }
}

/// How hard a WAL checkpoint tries (`sqlite3_wal_checkpoint_v2` modes).
public enum CheckpointMode: String, Sendable {
    case passive = "PASSIVE", full = "FULL", restart = "RESTART", truncate = "TRUNCATE"
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
    /// `PRAGMA integrity_check`: an empty array means the file is sound.
    func integrityProblems() throws -> [String] {
        let messages = try rows("PRAGMA integrity_check", cached: false).compactMap { row -> String? in
            if case .text(let text) = row.first { return text }
            return nil
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
