import Foundation

/// Encodes and decodes snapshot payloads: per entity, chunks of up to ``objectsPerChunk``
/// objects in column form (``ColumnBlock``, the layout contexts hold them in), each an LZ4 frame,
/// compressed and decompressed in parallel.
enum SnapshotArchive {
    static let objectsPerChunk = 20_000

    /// A fingerprint of one entity's schema (its attributes, columns, types, indexes).
    static func fingerprint(_ schema: EntitySchema) -> UInt64 {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Fingerprint.of((try? encoder.encode(schema)) ?? Data())
    }

    /// A fingerprint of every registered entity's schema.
    static func fingerprint(_ schemas: [EntitySchema]) -> UInt64 {
        var writer = ByteWriter()
        for schema in schemas.sorted(by: { $0.name < $1.name }) {
            writer.append(schema.name)
            writer.append(fingerprint(schema))
        }
        return Fingerprint.of(writer.data)
    }

    /// One entity's objects to archive, in chunks of at most ``objectsPerChunk`` (an entity
    /// with no object has one empty chunk).
    struct Section: Sendable {
        let schema: EntitySchema
        let chunks: [ColumnBlock]
        var count: Int { chunks.reduce(0) { $0 + $1.count } }
    }

    /// What a write produced.
    struct Written: Sendable {
        let header: Data
        let chunks: [Data]
        /// What `header` says, as a reader decodes it.
        let described: SnapshotHeader
        var fileSize: Int { header.count + chunks.reduce(0) { $0 + $1.count } }
    }

    /// Encodes and compresses every section's chunks (in parallel) and builds the header.
    static func encode(_ sections: [Section], storeID: UUID, generation: Int64, schemas: [EntitySchema]) throws -> Written {
        let jobs = sections.enumerated().flatMap { section in section.element.chunks.indices.map { (section.offset, $0) } }
        let results = Locked([Int: Result<(Data, Int), Error>]())
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            let (section, chunk) = jobs[index]
            let result = Result<(Data, Int), Error> {
                let raw = sections[section].chunks[chunk].archived()
                return (try raw.withUnsafeBytes { try LZ4Frame.compress($0) }, raw.count)
            }
            results.withLock { $0[index] = result }
        }
        let compressed = try results.withLock { results in try jobs.indices.map { try results[$0]!.get() } }
        var layout: [(entity: String, fingerprint: UInt64, chunks: [(compressed: Int, uncompressed: Int, objects: Int)])] =
            sections.map { ($0.schema.name, fingerprint($0.schema), []) }
        for (index, (section, chunk)) in jobs.enumerated() {
            layout[section].chunks.append((compressed[index].0.count, compressed[index].1, sections[section].chunks[chunk].count))
        }
        let header = SnapshotHeader.encode(storeID: storeID, generation: generation, createdAt: Date(),
                                           schemaFingerprint: fingerprint(schemas), sections: layout)
        return Written(header: header.bytes, chunks: compressed.map(\.0), described: header.header)
    }

    /// Decompresses and parses one section's chunks (in parallel), checking every cell
    /// (``ColumnBlock/init(archived:count:schema:)``), then joins them into one block and indexes
    /// its keys (two objects with one key are refused). No value of the app's type is built.
    static func section(_ entry: SnapshotHeader.Entry, in file: UnsafeRawBufferPointer,
                        schema: EntitySchema) throws(SnapshotRejection) -> LoadedSection {
        let results = Locked([Int: Result<ColumnBlock, SnapshotRejection>]())
        // The buffer outlives the concurrentPerform call, which returns only when every iteration has.
        nonisolated(unsafe) let file = file
        DispatchQueue.concurrentPerform(iterations: entry.chunks.count) { index in
            let chunk = entry.chunks[index]
            let result = Result<ColumnBlock, SnapshotRejection> { () throws(SnapshotRejection) -> ColumnBlock in
                try chunk.inflate(from: file) { (contents) throws(SnapshotRejection) -> ColumnBlock in
                    try ColumnBlock(archived: contents, count: chunk.objectCount, schema: schema)
                }
            }
            results.withLock { $0[index] = result }
        }
        var block = ColumnBlock(schema: schema)
        for index in entry.chunks.indices {
            switch results.withLock({ $0.removeValue(forKey: index)! }) {
            case .success(let chunk): block.append(contentsOf: chunk)
            case .failure(let rejection): throw rejection
            }
        }
        guard block.count == entry.objectCount else { throw .undecodable("\(entry.entity): object count mismatch") }
        do {
            try block.indexKeys()
        } catch {
            throw .undecodable("\(entry.entity): \(error)")
        }
        return LoadedSection(block: block)
    }
}

extension SnapshotHeader.Chunk {
    /// Decompresses this chunk of `file` into a temporary buffer and hands its contents to `body`.
    func inflate<T>(from file: UnsafeRawBufferPointer,
                    _ body: (UnsafeRawBufferPointer) throws(SnapshotRejection) -> T) throws(SnapshotRejection) -> T {
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, uncompressedSize), alignment: 8)
        defer { raw.deallocate() }
        let destination = UnsafeMutableRawBufferPointer(rebasing: raw[0..<uncompressedSize])
        try LZ4Frame.decompress(UnsafeRawBufferPointer(rebasing: file[offset..<(offset + compressedSize)]), into: destination)
        return try body(UnsafeRawBufferPointer(destination))
    }
}

/// A loaded section: one entity's objects as a checked block, ready for whatever holds objects
/// (a context's graph; the archive does not know who).
struct LoadedSection: Sendable {
    let block: ColumnBlock
    var count: Int { block.count }
}
