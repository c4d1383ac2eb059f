import Foundation

extension StoreInspector {
    /// Compacts a store file in place — the one inspection operation that writes: checkpoints the
    /// WAL into the database file, rebuilds the file without free pages (`VACUUM`), truncates the
    /// WAL and closes.
    ///
    /// The file is first opened read-only and checked to be a store this build reads; nothing is
    /// created. Then it is claimed for this connection alone (`PRAGMA locking_mode = EXCLUSIVE`,
    /// `BEGIN EXCLUSIVE`): every other connection to a WAL-mode file — an app's, another tool's —
    /// holds a shared lock on it from its first read until it closes, so the claim fails at once
    /// while one is open, and the store is left untouched. While the claim lasts no other
    /// connection can open the file.
    ///
    /// The frames reported are those a `PASSIVE` checkpoint copied before anything else ran (a
    /// `TRUNCATE` checkpoint resets the WAL, so its own counts are always 0): the changes a
    /// crashed or killed app left in the WAL, or none after a clean close.
    /// - Throws: what ``init(path:)`` throws; `.busy` when another connection has the store open.
    public static func vacuum(at path: String) throws -> VacuumReport {
        do {
            _ = try StoreInspector(path: path)
        }
        let before = totalBytes(path)
        var options = Connection.Options()
        options.busyTimeout = 0
        do {
            let (checkpointed, pagesBefore, pagesAfter) = try { () throws -> (Int, (total: Int, free: Int), Int) in
                let connection = try Connection(path: path, options: options)
                try connection.execute("PRAGMA locking_mode = EXCLUSIVE")
                try connection.execute("BEGIN EXCLUSIVE")
                try connection.execute("COMMIT")
                let pagesBefore = try connection.pageCounts()
                let copied = try connection.checkpoint(.passive)
                try connection.execute("VACUUM")
                _ = try connection.checkpoint(.truncate)
                return (copied.checkpointedFrames, pagesBefore, try connection.pageCounts().total)
            }()
            // The connection is closed here: the last one out removes the WAL.
            return VacuumReport(bytesBefore: before, bytesAfter: totalBytes(path), checkpointedFrames: checkpointed,
                                pagesBefore: pagesBefore.total, freePagesBefore: pagesBefore.free, pagesAfter: pagesAfter)
        } catch let error as StrataError where error.code == .busy {
            throw StrataError(.busy, "another connection has the store open (an app, or another strata command); "
                              + "close it and run vacuum again", path: path)
        }
    }

    private static func totalBytes(_ path: String) -> Int64 {
        (fileSize(path) ?? 0) + (fileSize(path + "-wal") ?? 0)
    }
}
