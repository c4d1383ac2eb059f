import Foundation

/// Reading snapshot files without a store: for tools such as `strata snapshot info`.
public enum Snapshot {
    /// The checksum a snapshot's header records for each chunk (``SnapshotHeader/Chunk/checksum``):
    /// XXH64 with seed 0, as the xxHash specification defines it, of the chunk's LZ4 frame as it
    /// is in the file. Any xxHash library computes the same, so other tools can check a file.
    public static func checksum(ofChunk bytes: UnsafeRawBufferPointer) -> UInt64 { XXH64.hash(bytes) }

    /// Reads and checks a snapshot's header (magic, format version, CRC-32) and table of contents.
    ///
    /// ```swift
    /// let header = try Snapshot.readHeader(at: snapshotPath)
    /// print(header.objectCount, header.generation)
    /// ```
    /// - Throws: ``StrataError`` with code ``StrataError/Code/invalidSnapshot``: its
    ///   ``StrataError/snapshotRejection`` says what kind of problem the file has, its message
    ///   what and where.
    public static func readHeader(at path: String) throws -> SnapshotHeader {
        do throws(StrataError) {
            return try map(path).withUnsafeBytes { bytes in Result { () throws(StrataError) in try SnapshotHeader.decode(bytes) } }
                .get()
        } catch {
            throw error.with(path: path)
        }
    }

    /// The snapshot file's bytes, memory-mapped: the one place a snapshot file is opened.
    /// - Throws: ``SnapshotRejection/missing`` when nothing is at `path`;
    ///   ``SnapshotRejection/unreadable`` for a directory or another non-regular file, or a file
    ///   that cannot be read (permissions, I/O). The error names `path`.
    static func map(_ path: String) throws(StrataError) -> Data {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw .snapshot(.missing, path: path)
        }
        if isDirectory.boolValue { throw .snapshot(.unreadable, "the path is a directory, not a file", path: path) }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw .snapshot(.unreadable, error.localizedDescription, path: path)
        }
    }
}
