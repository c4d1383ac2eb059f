import Foundation

extension Snapshot {
    /// Reads a snapshot and checks it whole, never loading it into a context: the header (magic,
    /// format, CRC-32), every LZ4 frame of the payload (its checksum, sizes; deferred frames
    /// decompressed too, as a warm start does only when their values are read) and, when
    /// `schemas` is given (a store's recorded schemas, see ``StoreInspector/entities``), that the
    /// archive was written with those schemas and that every chunk holds exactly its objects'
    /// cells, each of a storage class its attribute reads.
    /// - Returns: the header.
    /// - Throws: the ``SnapshotRejection`` the first problem found would cause at a warm start.
    public static func verify(at path: String, schemas: [EntitySchema]? = nil) throws(SnapshotRejection) -> SnapshotHeader {
        return try map(path).withUnsafeBytes { bytes in Result { () throws(SnapshotRejection) -> SnapshotHeader in
            let header = try SnapshotHeader.decode(bytes)
            let matched = try schemas.map { schemas throws(SnapshotRejection) in try header.matchedSchemas(schemas) }
            for (index, entry) in header.entities.enumerated() {
                try verify(entry, in: bytes, schema: matched?[index])
            }
            return header
        } }.get()
    }

    private static func verify(_ entry: SnapshotHeader.Entry, in file: UnsafeRawBufferPointer,
                               schema: EntitySchema?) throws(SnapshotRejection) {
        guard entry.chunks.reduce(0, { $0 + $1.objectCount }) == entry.objectCount else {
            throw .undecodable("\(entry.entity): object count mismatch")
        }
        for chunk in entry.chunks {
            var deferred: ArenaPage?
            if chunk.deferredCompressedSize > 0 {
                let page = try chunk.deferredPage(from: file) {}
                page.fill()   // decompressed now, as a first read would
                if page.deferred?.failed == true { throw .checksumMismatch }
                deferred = page
            }
            try chunk.inflate(from: file) { (contents) throws(SnapshotRejection) in
                guard let schema else { return }
                try chunk.checkDeferredFrame(of: schema)
                _ = try ColumnBlock(archived: contents, count: chunk.objectCount, arenaSize: chunk.arenaSize, deferred: deferred,
                                    schema: schema)
            }
        }
    }
}
