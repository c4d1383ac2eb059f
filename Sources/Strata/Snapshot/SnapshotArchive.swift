import Foundation

/// Encodes and decodes snapshot payloads: per entity, chunks of up to ``objectsPerChunk``
/// objects in column form (``ColumnBlock``, the layout contexts hold them in), each an LZ4 frame,
/// compressed and decompressed in parallel.
enum SnapshotArchive {
    static let objectsPerChunk = 10_000
    /// The objects in a section's first chunk: a few screens of a list, decompressed and checked
    /// on their own so that a warm start can show the first screen before the rest is read.
    static let objectsInFirstChunk = 1_000

    /// A fingerprint of one entity's schema (its attributes, columns, types, indexes, and the
    /// order its objects are archived in: ``Entity/snapshotOrder``).
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

    /// One entity's objects to archive, in the entity's ``Entity/snapshotOrder``: a first chunk of
    /// at most ``objectsInFirstChunk``, then chunks of at most ``objectsPerChunk`` (an entity with
    /// no object has one empty chunk).
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

    /// Decompresses and parses one section's chunks (a batch of one per core at a time, in
    /// parallel), checking every cell (``ColumnBlock/appendArchived(_:count:)``), and joins them
    /// into one block sized up front. Its keys are indexed by the loader (``SnapshotLoader``),
    /// after the file is let go. No value of the app's type is built. Each concurrent job
    /// decompresses into one buffer of its own, reused for every chunk it takes, so that a load
    /// holds the joined block plus one chunk per core, and touches fresh memory only for the block.
    static func section(_ entry: SnapshotHeader.Entry, in file: UnsafeRawBufferPointer,
                        schema: EntitySchema) throws(SnapshotRejection) -> LoadedSection {
        let fixed = schema.attributes.count * ColumnBlock.bytesPerCell
        let arenaBytes = entry.chunks.reduce(0) { $0 + max(0, $1.uncompressedSize - $1.objectCount * fixed) }
        var block = ColumnBlock(schema: schema, capacity: entry.objectCount, arenaCapacity: arenaBytes, reservesKeys: false)
        let jobs = min(max(1, ProcessInfo.processInfo.activeProcessorCount), entry.chunks.count)
        let largest = entry.chunks.map(\.uncompressedSize).max() ?? 0
        let buffers = (0..<jobs).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, largest), alignment: 8) }
        defer { for buffer in buffers { buffer.deallocate() } }
        // The file and the buffers outlive the concurrentPerform calls, which return only when
        // every iteration has; each iteration writes only its own buffer.
        nonisolated(unsafe) let file = file, shared = buffers
        for first in stride(from: 0, to: entry.chunks.count, by: jobs) {
            let chunks = Array(entry.chunks[first..<min(entry.chunks.count, first + jobs)])
            let failures = Locked([Int: SnapshotRejection]())
            DispatchQueue.concurrentPerform(iterations: chunks.count) { job in
                do throws(SnapshotRejection) {
                    try chunks[job].inflate(from: file, into: shared[job])
                } catch {
                    failures.withLock { $0[job] = error }
                }
            }
            for job in chunks.indices {
                if let failure = failures.withLock({ $0[job] }) { throw failure }
                try block.appendArchived(UnsafeRawBufferPointer(rebasing: buffers[job][0..<chunks[job].uncompressedSize]),
                                         count: chunks[job].objectCount)
            }
        }
        guard block.count == entry.objectCount else { throw .undecodable("\(entry.entity): object count mismatch") }
        return LoadedSection(block: block)
    }
}

extension SnapshotHeader.Chunk {
    /// Decompresses this chunk of `file` into the start of `buffer` (at least its
    /// `uncompressedSize` bytes long).
    func inflate(from file: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer) throws(SnapshotRejection) {
        try LZ4Frame.decompress(UnsafeRawBufferPointer(rebasing: file[offset..<(offset + compressedSize)]),
                                into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<uncompressedSize]))
    }

    /// Decompresses this chunk of `file` into a temporary buffer and hands its contents to `body`.
    func inflate<T>(from file: UnsafeRawBufferPointer,
                    _ body: (UnsafeRawBufferPointer) throws(SnapshotRejection) -> T) throws(SnapshotRejection) -> T {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, uncompressedSize), alignment: 8)
        defer { buffer.deallocate() }
        try inflate(from: file, into: buffer)
        return try body(UnsafeRawBufferPointer(rebasing: buffer[0..<uncompressedSize]))
    }
}

/// A loaded section: one entity's objects as a checked block, ready for whatever holds objects
/// (a context's graph; the archive does not know who).
struct LoadedSection: Sendable {
    let block: ColumnBlock
    var count: Int { block.count }
}
