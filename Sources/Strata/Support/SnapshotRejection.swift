/// Why a snapshot was not used: the kind of a snapshot failure, for matching. Every case leads
/// to a cold start from SQLite.
///
/// A refused snapshot is a ``StrataError`` with code ``StrataError/Code/invalidSnapshot``; its
/// ``StrataError/snapshotRejection`` is one of these, and its message is this kind's
/// ``description``, then what was found and where (the byte, the entity, the chunk): "the
/// snapshot is truncated: it ends at byte 100, inside its header (812 bytes)". A warm start's outcome and an inspector's verdict
/// carry that error (``SnapshotOutcome/coldStart(_:)``, ``SnapshotValidity/invalid(_:)``).
///
/// ```swift
/// let warm = try await Store.openWarm(at: path, snapshot: snapshotPath, entities: [Article.self])
/// if warm.outcome.rejection == .schemaChanged { print("the app's entities changed: a cold start") }
/// ```
public enum SnapshotRejection: Sendable, Hashable, CustomStringConvertible {
    /// There is no snapshot file.
    case missing
    /// Something is at the snapshot's path but cannot be read as a file (a directory, no
    /// permission, an I/O error).
    case unreadable
    /// The file is empty.
    case empty
    /// The file does not start with the snapshot magic.
    case badMagic
    /// The file was written in a format version this build does not read.
    case unsupportedFormat(Int)
    /// The file ends before its header or a frame does.
    case truncated
    /// The header's CRC-32 or a frame's checksum (``SnapshotHeader/Chunk/checksum``) does not
    /// match, or a frame does not decompress to its recorded size.
    case checksumMismatch
    /// The schema (or an entity's) differs from the app's.
    case schemaChanged
    /// The archive was taken from another store.
    case otherStore
    /// The archive reflects a generation the database does not have (it was restored or rolled back).
    case newerThanDatabase
    /// The database is ahead and its change log no longer reaches back to the archive.
    case historyPruned
    /// The header or a chunk holds something no writer writes: a size out of range, invalid
    /// UTF-8, a cell its attribute cannot read, two objects with one key.
    case undecodable

    /// The kind of failure, in words: "the snapshot fails its checksum" — how the message of the
    /// error that carries it starts.
    public var description: String {
        switch self {
        case .missing: return "no snapshot file"
        case .unreadable: return "the snapshot cannot be read"
        case .empty: return "the snapshot file is empty"
        case .badMagic: return "not a Strata snapshot (wrong magic)"
        case .unsupportedFormat(let version): return "unsupported snapshot format version \(version)"
        case .truncated: return "the snapshot is truncated"
        case .checksumMismatch: return "the snapshot fails its checksum"
        case .schemaChanged: return "the snapshot was written with another schema or entity archive version"
        case .otherStore: return "the snapshot belongs to another store"
        case .newerThanDatabase: return "the snapshot is newer than the database"
        case .historyPruned: return "the change log no longer reaches back to the snapshot"
        case .undecodable: return "the snapshot cannot be decoded"
        }
    }
}

extension StrataError {
    /// A refused snapshot: code ``Code/invalidSnapshot``, `rejection` its kind, and a message
    /// made of the kind's description and `detail`, what was found and where ("it ends at byte
    /// 40, inside the section count (4 bytes at byte 36)").
    static func snapshot(_ rejection: SnapshotRejection, _ detail: String? = nil, path: String? = nil,
                         entity: String? = nil) -> StrataError {
        let message = detail.map { "\(rejection): \($0)" } ?? rejection.description
        var error = StrataError(.invalidSnapshot, message, path: path, entity: entity)
        error.snapshotRejection = rejection
        return error
    }

    /// This error with `place` added to its message ("…, in chunk 3 of Article"): where a
    /// snapshot failure was met, known to the caller of the code that met it.
    func within(_ place: String) -> StrataError {
        var error = self
        error.message += ", in \(place)"
        return error
    }
}
