extension StoreInspector {
    /// Whether the snapshot at `path` would warm-start this store: its file checks out whole
    /// (``Snapshot/verify(at:schemas:)`` with the recorded schemas), it was taken from this store,
    /// its generation is not newer than the database's and the change log still reaches back to it.
    /// - Throws: SQLite errors reading the store (never for a bad snapshot: that is ``SnapshotValidity/invalid(_:)``).
    public func snapshotValidity(at path: String) throws -> SnapshotValidity {
        let header: SnapshotHeader
        do {
            header = try Snapshot.verify(at: path, schemas: entities)
        } catch let error as StrataError where error.snapshotRejection != nil {
            return .invalid(error)
        }
        return try validity(of: header)
    }

    /// Whether a snapshot with this header would warm-start this store, judging identity and
    /// generation only (the file's contents are not read again).
    public func validity(of header: SnapshotHeader) throws -> SnapshotValidity {
        let range = try changeLog()
        switch header.fit(storeID: storeID, generation: range.generation, floor: range.floor) {
        case .rejected(let error): return .invalid(error)
        case .current: return .current
        case .behind: break
        }
        let behind = try connection.rows("SELECT count(*) FROM \(ChangeLog.table) WHERE generation > ?",
                                         [.integer(header.generation)], cached: false).first?.first
        return .behind(changes: Int.fromDatabaseValue(behind ?? .null) ?? 0)
    }
}
