import Foundation

extension StoreInspector {
    /// Opens `path` read-only (`SQLITE_OPEN_READONLY`), or immutable when SQLite cannot open it
    /// for shared reading in a directory the process cannot write.
    ///
    /// A reader of a WAL-mode file shares it through the `-wal` and `-shm` companions. SQLite 3.40
    /// opens it read-only when both exist — a `-shm` it cannot write is mapped read-only, and the
    /// `-wal` is read through it, so what an app committed there is seen — or when it can create
    /// the missing ones. In a read-only directory without them the open fails: "attempt to write a
    /// readonly database" without a `-wal`, "unable to open database file" without a `-shm`. The
    /// file is then opened immutable (`Connection.immutableURI`): the database file alone, which is
    /// complete unless a `-wal` holds changes not yet checkpointed (``unreadWALBytes``). No app can
    /// be writing it then: every connection to a WAL-mode file creates the `-shm`.
    /// - Returns: the connection, and whether it is immutable.
    static func openReadOnly(_ path: String) throws -> (Connection, immutable: Bool) {
        var options = Connection.Options()
        options.readOnly = true
        do {
            return (try Connection(path: path, options: options), false)
        } catch let error as StrataError where error.code == .cannotOpen && !isDirectoryWritable(path) {
            options.immutable = true
            guard let connection = try? Connection(path: path, options: options) else { throw error }
            return (connection, true)
        }
    }

    /// The size of the `-wal` file that an immutable read leaves out (0 when the file is read
    /// normally, or has no `-wal`). Frames in it may already be checkpointed, so this is what
    /// *may* be missing: changes an app committed after the last checkpoint are not shown.
    public var unreadWALBytes: Int64 {
        isReadAsImmutable ? Self.fileSize(path + "-wal") ?? 0 : 0
    }

    private static func isDirectoryWritable(_ path: String) -> Bool {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return FileManager.default.isWritableFile(atPath: directory)
    }
}
