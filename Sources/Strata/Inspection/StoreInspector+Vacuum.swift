import Foundation

extension StoreInspector {
    /// Compacts a store file in place — the one inspection operation that writes: checkpoints the
    /// WAL into the database file (`wal_checkpoint(TRUNCATE)`), rebuilds the file without free
    /// pages (`VACUUM`), checkpoints again and closes.
    ///
    /// The file is first opened read-only and checked to be a store this build reads; nothing is
    /// created. Run it while no app has the store open: a checkpoint blocked by another connection
    /// is reported as ``StrataError/Code/busy`` before anything is rebuilt.
    /// - Throws: what ``init(path:)`` throws; `.busy` when another connection keeps the WAL in use.
    public static func vacuum(at path: String) throws -> VacuumReport {
        _ = try StoreInspector(path: path)
        let before = totalBytes(path)
        let (checkpointed, pagesBefore, pagesAfter) = try { () throws -> (Int, (total: Int, free: Int), Int) in
            let connection = try Connection(path: path, options: Connection.Options())
            let pagesBefore = try connection.pageCounts()
            let first = try connection.checkpoint(.truncate)
            if first.wasBlocked {
                throw StrataError(.busy, "another connection is using the store; close it and try again", path: path)
            }
            try connection.execute("VACUUM")
            _ = try connection.checkpoint(.truncate)
            return (first.checkpointedFrames, pagesBefore, try connection.pageCounts().total)
        }()
        // The connection is closed here: the last one out removes the WAL.
        return VacuumReport(bytesBefore: before, bytesAfter: totalBytes(path), checkpointedFrames: checkpointed,
                            pagesBefore: pagesBefore.total, freePagesBefore: pagesBefore.free, pagesAfter: pagesAfter)
    }

    private static func totalBytes(_ path: String) -> Int64 {
        (fileSize(path) ?? 0) + (fileSize(path + "-wal") ?? 0)
    }
}
