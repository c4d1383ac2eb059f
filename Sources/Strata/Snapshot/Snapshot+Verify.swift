import Foundation

extension Snapshot {
    /// Reads a snapshot and checks it whole, never loading it into a context: the header (magic,
    /// format, CRC-32), every LZ4 frame of the payload (its checksum, sizes; deferred frames
    /// decompressed too, as a warm start does only when their values are read) and, when
    /// `schemas` is given (a store's recorded schemas, see ``StoreInspector/entities``), that the
    /// archive was written with those schemas and that every chunk holds exactly its objects'
    /// cells, each of a storage class its attribute reads.
    ///
    /// ```swift
    /// do {
    ///     let header = try Snapshot.verify(at: snapshotPath)
    ///     print("\(header.objectCount) objects, generation \(header.generation)")
    /// } catch let error as StrataError {
    ///     print(error.snapshotRejection == .checksumMismatch ? "damaged: \(error.message)" : "\(error)")
    /// }
    /// ```
    /// - Parameters:
    ///   - path: The snapshot file.
    ///   - schemas: The schemas the archive must have been written with, or nil to check its
    ///     frames only.
    /// - Returns: the header.
    /// - Throws: the ``StrataError`` the first problem found would cause at a warm start (code
    ///   ``StrataError/Code/invalidSnapshot``; its ``StrataError/snapshotRejection`` says which
    ///   kind of problem, its message what and where).
    public static func verify(at path: String, schemas: [EntitySchema]? = nil) throws -> SnapshotHeader {
        do throws(StrataError) {
            return try map(path).withUnsafeBytes { bytes in Result { () throws(StrataError) -> SnapshotHeader in
                let header = try SnapshotHeader.decode(bytes)
                let matched = try schemas.map { schemas throws(StrataError) in try header.matchedSchemas(schemas) }
                for (index, entry) in header.entities.enumerated() {
                    try verify(entry, in: bytes, schema: matched?[index])
                }
                return header
            } }.get()
        } catch {
            throw error.with(path: path)
        }
    }

    private static func verify(_ entry: SnapshotHeader.Entry, in file: UnsafeRawBufferPointer,
                               schema: EntitySchema?) throws(StrataError) {
        let counted = entry.chunks.reduce(0) { $0 + $1.objectCount }
        guard counted == entry.objectCount else { throw entry.objectCountMismatch(counted) }
        for (number, chunk) in entry.chunks.enumerated() {
            do throws(StrataError) {
                var deferred: ArenaPage?
                if chunk.deferredCompressedSize > 0 {
                    let page = try chunk.deferredPage(from: file) {}
                    page.fill()   // decompressed now, as a first read would
                    if page.deferred?.failed == true {
                        throw .snapshot(.checksumMismatch, "the chunk's deferred frame does not decompress to its "
                                        + "\(chunk.deferredSize) bytes", entity: entry.entity)
                    }
                    deferred = page
                }
                try chunk.inflate(from: file) { (contents) throws(StrataError) in
                    guard let schema else { return }
                    try chunk.checkDeferredFrame(of: schema)
                    _ = try ColumnBlock(archived: contents, count: chunk.objectCount, arenaSize: chunk.arenaSize,
                                        deferred: deferred, schema: schema)
                }
            } catch {
                throw error.within(chunk.place(number, of: entry.entity))
            }
        }
    }
}
