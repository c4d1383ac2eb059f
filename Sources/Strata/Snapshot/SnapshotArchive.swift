import Foundation

/// Encodes and decodes snapshot payloads: per entity, chunks of up to ``objectsPerChunk``
/// objects in column form (``ColumnBlock``, the layout contexts hold them in), each an LZ4 frame,
/// compressed and decompressed in parallel.
enum SnapshotArchive {
    static let objectsPerChunk = 10_000

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

    /// Decompresses and parses one section's chunks (a batch of one per core at a time, in
    /// parallel), checking every cell (``ColumnBlock/init(archived:count:schema:)``), joins them
    /// into one block sized up front. Its keys are indexed by the loader (``SnapshotLoader``),
    /// after the file is let go. No value of the app's type is built. Batches bound the memory a load holds at its peak:
    /// the joined block plus one batch of chunks, not every chunk at once.
    static func section(_ entry: SnapshotHeader.Entry, in file: UnsafeRawBufferPointer,
                        schema: EntitySchema) throws(SnapshotRejection) -> LoadedSection {
        // The buffer outlives the concurrentPerform calls, which return only when every iteration has.
        nonisolated(unsafe) let file = file
        let fixed = schema.attributes.count * ColumnBlock.bytesPerCell
        let arenaBytes = entry.chunks.reduce(0) { $0 + max(0, $1.uncompressedSize - $1.objectCount * fixed) }
        var block = ColumnBlock(schema: schema, capacity: entry.objectCount, arenaCapacity: arenaBytes, reservesKeys: false)
        let batch = max(1, ProcessInfo.processInfo.activeProcessorCount)
        for first in stride(from: 0, to: entry.chunks.count, by: batch) {
            let indices = Array(first..<min(entry.chunks.count, first + batch))
            let results = Locked([Int: Result<InflatedChunk, SnapshotRejection>]())
            DispatchQueue.concurrentPerform(iterations: indices.count) { job in
                let result = Result { () throws(SnapshotRejection) -> InflatedChunk in
                    try InflatedChunk(entry.chunks[indices[job]], from: file)
                }
                results.withLock { $0[job] = result }
            }
            for job in indices.indices {
                switch results.withLock({ $0.removeValue(forKey: job)! }) {
                case .success(let chunk):
                    try block.appendArchived(UnsafeRawBufferPointer(chunk.bytes), count: entry.chunks[indices[job]].objectCount)
                case .failure(let rejection): throw rejection
                }
            }
        }
        guard block.count == entry.objectCount else { throw .undecodable("\(entry.entity): object count mismatch") }
        return LoadedSection(block: block)
    }
}

/// One chunk decompressed into a buffer of its own, which lives as long as this object.
///
/// `@unchecked Sendable` is safe: the buffer is written once, by the initializer, before the
/// object is published (through a lock) to the thread that reads it, and is never written again;
/// `deinit` frees it when the last reference goes.
final class InflatedChunk: @unchecked Sendable {
    let bytes: UnsafeMutableRawBufferPointer

    init(_ chunk: SnapshotHeader.Chunk, from file: UnsafeRawBufferPointer) throws(SnapshotRejection) {
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, chunk.uncompressedSize), alignment: 8)
        let destination = UnsafeMutableRawBufferPointer(rebasing: raw[0..<chunk.uncompressedSize])
        do {
            try LZ4Frame.decompress(UnsafeRawBufferPointer(rebasing: file[chunk.offset..<(chunk.offset + chunk.compressedSize)]),
                                    into: destination)
        } catch {
            raw.deallocate()
            throw error
        }
        bytes = destination
        allocation = raw
    }

    private let allocation: UnsafeMutableRawBufferPointer

    deinit { allocation.deallocate() }
}

extension SnapshotHeader.Chunk {
    /// Decompresses this chunk of `file` into a temporary buffer and hands its contents to `body`.
    func inflate<T>(from file: UnsafeRawBufferPointer,
                    _ body: (UnsafeRawBufferPointer) throws(SnapshotRejection) -> T) throws(SnapshotRejection) -> T {
        let inflated = try InflatedChunk(self, from: file)
        return try body(UnsafeRawBufferPointer(inflated.bytes))
    }
}

/// A loaded section: one entity's objects as a checked block, ready for whatever holds objects
/// (a context's graph; the archive does not know who).
struct LoadedSection: Sendable {
    let block: ColumnBlock
    var count: Int { block.count }
}
