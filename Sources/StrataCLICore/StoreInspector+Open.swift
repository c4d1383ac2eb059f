import Strata

extension StoreInspector {
    /// Opens `path` for a read-only command (`inspect`, `query`, `check`, `snapshot info --store`).
    ///
    /// In a directory the user cannot write, the store may be readable only as its database file
    /// alone (``StoreInspector/isReadAsImmutable``). Then a `-wal` beside it is not read, and a
    /// warning on standard error says so, with its size: what it holds beyond the last checkpoint
    /// is not shown.
    static func open(_ path: String, logging common: CommonOptions) throws -> StoreInspector {
        let logger = common.logger()
        logger.debug("opening read-only", metadata: ["path": "\(path)"])
        let inspector = try StoreInspector(path: path)
        if inspector.isReadAsImmutable {
            logger.debug("the directory is not writable: reading the database file alone (immutable)",
                         metadata: ["path": "\(path)"])
        }
        if inspector.unreadWALBytes > 0 {
            Console.current.errorLine("strata: warning: \(path): the directory is not writable and the store has no -shm "
                                      + "file, so its -wal (\(Format.bytes(inspector.unreadWALBytes))) cannot be read: "
                                      + "changes not yet checkpointed into the database file are not shown")
        }
        return inspector
    }
}
