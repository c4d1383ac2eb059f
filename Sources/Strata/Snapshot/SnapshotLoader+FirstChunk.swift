import Foundation

extension SnapshotLoader {
    /// An archive's first chunk of one entity's section, checked, with the archive's header:
    /// what a warm start shows a first screen from before the rest is read.
    struct FirstChunk: Sendable {
        let header: SnapshotHeader
        /// The chunk's objects, in the entity's ``EntitySchema/snapshotOrder`` (ties by key),
        /// every cell checked, keys indexed (two objects with one key are refused).
        let block: ColumnBlock
        /// Whether the chunk is the whole section (every archived object of the entity).
        let isWholeSection: Bool
    }

    /// Reads the header of the archive at `path`, checks it (magic, format, CRC-32, every
    /// entity's fingerprint against the registry), and decompresses and checks the first chunk
    /// of `entity`'s section — nothing else of the file is read.
    func firstChunk(_ path: String, of entity: String) -> Result<FirstChunk, StrataError> {
        Result { () throws(StrataError) -> FirstChunk in
            try Snapshot.map(path).withUnsafeBytes { bytes in firstChunk(of: entity, in: bytes) }.get()
        }.mapError { $0.with(path: path) }
    }

    /// ``firstChunk(_:of:)`` of an archive's bytes.
    func firstChunk(of entity: String, in bytes: UnsafeRawBufferPointer) -> Result<FirstChunk, StrataError> {
        Result { () throws(StrataError) -> FirstChunk in
            let header = try SnapshotHeader.decode(bytes)
            let schemas = try header.matchedSchemas(registry.schemas)
            guard let number = header.entities.firstIndex(where: { $0.entity == entity }),
                  let chunk = header.entities[number].chunks.first else {
                throw .snapshot(.undecodable, "the archive holds no \(entity)", entity: entity)
            }
            let schema = schemas[number]
            do throws(StrataError) {
                try chunk.checkDeferredFrame(of: schema)
                let deferred = schema.deferredAttributes.isEmpty
                    ? nil : try chunk.deferredPage(from: bytes, failed: { deferredFailure(entity, path: nil)(0) })
                var block = try chunk.inflate(from: bytes) { (contents) throws(StrataError) in
                    try ColumnBlock(archived: contents, count: chunk.objectCount, arenaSize: chunk.arenaSize, deferred: deferred,
                                    schema: schema)
                }
                try SnapshotLoader.indexKeys(of: &block)
                return FirstChunk(header: header, block: block, isWholeSection: header.entities[number].chunks.count == 1)
            } catch {
                throw error.within(chunk.place(0, of: entity))
            }
        }
    }
}
