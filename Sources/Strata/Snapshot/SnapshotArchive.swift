import Foundation

/// Encodes and decodes snapshot payloads: per entity, chunks of up to ``objectsPerChunk``
/// objects in column form (``ColumnBlock``, the layout contexts hold them in), each an LZ4 frame
/// (and a second one of its deferred attributes' bytes, for an entity that has some), compressed
/// and decompressed in parallel.
enum SnapshotArchive {
    static let objectsPerChunk = 5_000
    /// The objects in a section's first chunk: a few screens of a list, decompressed and checked
    /// on their own so that a warm start can show the first screen before the rest is read.
    static let objectsInFirstChunk = 1_000

    /// A fingerprint of one entity's schema (its attributes, columns, types, indexes, and the
    /// order its objects are archived in: ``Entity/snapshotOrder``): of its JSON encoding, made
    /// once per schema in a process (``fingerprints``).
    static func fingerprint(_ schema: EntitySchema) -> UInt64 {
        if let known = fingerprints.withLock({ $0[schema] }) { return known }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let fingerprint = Fingerprint.of((try? encoder.encode(schema)) ?? Data())
        fingerprints.withLock { $0[schema] = fingerprint }
        return fingerprint
    }

    /// The fingerprints made so far, by schema. A warm start checks each entity's fingerprint
    /// against its first chunk, then its whole archive; encoding the schema each time had cost
    /// a fresh process ~2 ms before the archive's load could start. Holds the few schemas a
    /// process registers (and those a tool reads from stores).
    private static let fingerprints = Locked([EntitySchema: UInt64]())

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
        /// The payload's frames, in file order (a chunk's deferred frame right after it).
        let chunks: [Data]
        /// What `header` says, as a reader decodes it.
        let described: SnapshotHeader
        var fileSize: Int { header.count + chunks.reduce(0) { $0 + $1.count } }
    }

    /// Encodes and compresses every section's chunks (in parallel) and builds the header. An
    /// entity with deferred attributes gets a second frame per chunk, of their bytes, right after
    /// the chunk's frame.
    static func encode(_ sections: [Section], storeID: UUID, generation: Int64, schemas: [EntitySchema]) throws -> Written {
        let jobs = sections.enumerated().flatMap { section in section.element.chunks.indices.map { (section.offset, $0) } }
        let compressed = try Parallel.run(jobs.map { section, chunk in
            { @Sendable () throws -> (frame: Data, deferred: Data, layout: SnapshotHeader.ChunkLayout) in
                let block = sections[section].chunks[chunk]
                let raw = block.archived()
                let frame = try raw.bytes.withUnsafeBytes { try LZ4Frame.compress($0) }
                let deferred = block.schema.deferredAttributes.isEmpty
                    ? Data() : try raw.deferred.withUnsafeBytes { try LZ4Frame.compress($0) }
                return (frame, deferred, .init(compressed: frame.count, uncompressed: raw.bytes.count, objects: block.count,
                                               arena: raw.arenaSize, checksum: frame.withUnsafeBytes { XXH64.hash($0) },
                                               deferredCompressed: deferred.count, deferred: raw.deferred.count,
                                               deferredChecksum: deferred.isEmpty ? 0 : deferred.withUnsafeBytes { XXH64.hash($0) }))
            }
        })
        var layout: [(entity: String, fingerprint: UInt64, chunks: [SnapshotHeader.ChunkLayout])] =
            sections.map { ($0.schema.name, fingerprint($0.schema), []) }
        for (index, (section, _)) in jobs.enumerated() { layout[section].chunks.append(compressed[index].layout) }
        let header = SnapshotHeader.encode(storeID: storeID, generation: generation, createdAt: Date(),
                                           schemaFingerprint: fingerprint(schemas), sections: layout)
        return Written(header: header.bytes, chunks: compressed.flatMap { [$0.frame, $0.deferred] }.filter { !$0.isEmpty },
                       described: header.header)
    }

    /// Decompresses and parses one section's chunks in parallel, each job taking the next chunk
    /// not yet taken (``Parallel/forEach(_:threads:_:)``), checking every cell
    /// (``ColumnBlock/parseArchived(_:count:schema:arenaSize:)``) and writing the chunk straight to
    /// its place in one block sized up front (where each chunk's rows and arena bytes go follows
    /// from the header's sizes). Its keys are indexed by the loader (``SnapshotLoader``), after
    /// the file is let go. No value of the app's type is built.
    ///
    /// A chunk is decompressed in two parts (``LZ4Frame/decompress(_:into:)``): its cells into a
    /// buffer of the job's own, reused for every chunk it takes, then copied into the block's
    /// columns; its arena bytes straight into their place in the block's arena, never copied. So
    /// a load holds the block plus one chunk's cells per core. The block's memory is first
    /// touched by the jobs, in parallel: on first touch, fresh memory costs more than the copy
    /// into it. A bad chunk fails the whole load, so arena bytes written before its cells were
    /// checked are never read.
    ///
    /// A chunk's deferred frame (``EntitySchema/deferredAttributes``) is checked against its
    /// checksum and copied, still compressed, into memory of the process's own (so that nothing
    /// done to the file afterwards reaches it), and becomes the block's deferred page for the
    /// chunk (``ColumnBlock/deferred``): decompressed on the first read of any of its bytes. A
    /// frame that then fails to decompress (the file was crafted so that its checksums match
    /// frames that are not LZ4: a damaged one fails its checksum here) leaves the page zeroed
    /// and is reported to `deferredFailure` with the chunk's number.
    static func section(_ entry: SnapshotHeader.Entry, in file: UnsafeRawBufferPointer, schema: EntitySchema,
                        deferredFailure: @escaping @Sendable (_ chunk: Int) -> Void = { _ in }) throws(StrataError) -> LoadedSection {
        // Where each chunk's rows and arena bytes start, and how many cell and arena bytes it has.
        var places: [(row: Int, arena: Int, cells: Int, arenaBytes: Int)] = []
        var rows = 0, arenaBytes = 0
        let defers = !schema.deferredAttributes.isEmpty
        for (number, chunk) in entry.chunks.enumerated() {
            let cells = chunk.uncompressedSize - chunk.arenaSize   // the header checked the arena fits
            do throws(StrataError) {
                try ColumnBlock.checkCellBytes(cells, count: chunk.objectCount, schema: schema)
                try chunk.checkDeferredFrame(of: schema)
            } catch {
                throw error.within(chunk.place(number, of: entry.entity))
            }
            places.append((rows, arenaBytes, cells, chunk.arenaSize))
            rows += chunk.objectCount
            arenaBytes += chunk.arenaSize
        }
        guard rows == entry.objectCount else { throw entry.objectCountMismatch(rows) }
        // With deferred pages after it, the arena is page 0 of the cells' payloads: under 4 GiB.
        guard !defers || arenaBytes <= Int(UInt32.max) else {
            throw .snapshot(.undecodable, "\(entry.entity)'s chunks hold an arena of \(arenaBytes) bytes beside deferred "
                            + "attributes (at most 4 GiB)", entity: entry.entity)
        }
        let pages = Locked([Int: ArenaPage]())
        // Every chunk's deferred frame copied into one allocation, each job its own chunks' range.
        var frameStarts: [Int] = [], frameBytes = 0
        for chunk in entry.chunks {
            frameStarts.append(frameBytes)
            frameBytes += chunk.deferredCompressedSize
        }
        let frames = defers ? CompressedFrames(byteCount: frameBytes) : nil
        var block = ColumnBlock(schema: schema, capacity: rows, reservesKeys: false)
        let jobs = min(Parallel.cores, entry.chunks.count)
        let largest = places.map(\.cells).max() ?? 0
        let buffers = (0..<jobs).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: largest, alignment: 8) }
        defer { for buffer in buffers { buffer.deallocate() } }
        let decompressors = try (0..<jobs).map { _ throws(StrataError) in try LZ4Frame.Decompressor() }
        let failures = Locked([Int: StrataError]())
        block.appendUnwritten(rows: rows, arenaBytes: arenaBytes) { columns, arena in
            // The file, the buffers and the arena outlive the Parallel.forEach call, which
            // returns only when every thread has; each thread writes only its own buffer and the
            // rows and arena bytes of the chunks it took.
            nonisolated(unsafe) let file = file, shared = buffers, arena = arena, decompressors = decompressors
            // Huge pages where the kernel allows: each job's populate then maps the arena 2 MiB
            // at a time (zeroed in one go) instead of 4 KiB at a time.
            FreshMemory.preferHugePages(arena)
            // Chunks are taken in file order by whichever thread is free; a bad one stops the
            // handing out, and every earlier chunk was taken before it and is finished.
            Parallel.forEach(entry.chunks.count, threads: jobs) { [places, frameStarts] job, index in
                do throws(StrataError) {
                    let chunk = entry.chunks[index], place = places[index]
                    let cells = UnsafeMutableRawBufferPointer(rebasing: shared[job][0..<place.cells])
                    let bytes = UnsafeMutableRawBufferPointer(rebasing: arena[place.arena..<(place.arena + place.arenaBytes)])
                    FreshMemory.populate(bytes)
                    try chunk.inflate(from: file, with: decompressors[job], into: [cells, bytes])
                    let parsed = try ColumnBlock.parseArchived(UnsafeRawBufferPointer(cells), count: chunk.objectCount,
                                                               schema: schema, arenaSize: place.arenaBytes,
                                                               deferredSize: chunk.deferredSize)
                    for (column, writer) in zip(parsed, columns) {
                        writer.write(tags: column.tags, numbers: column.numbers, lengths: column.lengths, at: place.row,
                                     bytesFrom: column.isDeferred ? ColumnBlock.deferredPayloadBase(page: index) + column.arenaStart
                                        : UInt64(place.arena) + column.arenaStart)
                    }
                    if let frames {
                        let page = try chunk.deferredPage(from: file, copyingInto: frames, at: frameStarts[index]) {
                            deferredFailure(index)
                        }
                        pages.withLock { $0[index] = page }
                    }
                    return true
                } catch {
                    failures.withLock { $0[index] = error.within(entry.chunks[index].place(index, of: entry.entity)) }
                    return false
                }
            }
        }
        // The first bad chunk in the file's order is the one reported, whichever job met it first.
        if let (_, failure) = failures.withLock({ $0.min { $0.key < $1.key } }) { throw failure }
        if defers { block.setDeferred(pages.withLock { pages in entry.chunks.indices.compactMap { pages[$0] } }) }
        return LoadedSection(block: block)
    }
}

extension SnapshotHeader.Chunk {
    /// Checks this chunk's bytes in `file` against its ``checksum`` and decompresses them into
    /// `parts`, which together hold exactly its `uncompressedSize` bytes
    /// (``LZ4Frame/Decompressor/decompress(_:into:)``) with `decompressor`.
    /// - Throws: ``SnapshotRejection/checksumMismatch`` when a byte of the chunk differs from what
    ///   was written; whatever ``LZ4Frame/Decompressor/decompress(_:into:)`` throws.
    func inflate(from file: UnsafeRawBufferPointer, with decompressor: LZ4Frame.Decompressor,
                 into parts: [UnsafeMutableRawBufferPointer]) throws(StrataError) {
        let frame = UnsafeRawBufferPointer(rebasing: file[offset..<(offset + compressedSize)])
        try Self.check(frame, at: offset, against: checksum, "the chunk's frame")
        try decompressor.decompress(frame, into: parts)
    }

    /// Checks `frame`, at byte `start` of the file, against the XXH64 `recorded` for it.
    /// - Throws: ``SnapshotRejection/checksumMismatch`` naming the frame and both checksums.
    private static func check(_ frame: UnsafeRawBufferPointer, at start: Int, against recorded: UInt64,
                              _ what: String) throws(StrataError) {
        let computed = XXH64.hash(frame)
        guard computed == recorded else {
            throw .snapshot(.checksumMismatch, "\(what) (\(frame.count) bytes at byte \(start)) has XXH64 "
                            + "\(computed.hexadecimal); the header records \(recorded.hexadecimal)")
        }
    }

    /// Where this chunk is, for a message: "Article's chunk 3 (bytes 1200..<5400)", `number`
    /// being its place in `entity`'s section.
    func place(_ number: Int, of entity: String) -> String {
        "\(entity)'s chunk \(number) (bytes \(offset)..<\(end))"
    }

    /// Checks that this chunk has a deferred frame exactly when `schema` defers attributes (and,
    /// without one, no deferred bytes): the one rule a load, a first chunk and a verify check.
    /// - Throws: ``SnapshotRejection/undecodable`` naming the entity.
    func checkDeferredFrame(of schema: EntitySchema) throws(StrataError) {
        let defers = !schema.deferredAttributes.isEmpty
        guard defers ? deferredCompressedSize > 0 : deferredCompressedSize == 0 && deferredSize == 0 else {
            throw .snapshot(.undecodable, "\(schema.name): a chunk \(defers ? "lacks" : "has") a frame of deferred bytes, "
                            + "which the entity \(defers ? "defers" : "does not defer")", entity: schema.name)
        }
    }

    /// This chunk's deferred frame in `file`, checked against its ``deferredChecksum`` and copied
    /// into `frames` from `start` (memory of the process's own), as an ``ArenaPage`` of its
    /// ``deferredSize`` bytes that decompresses the copy on the first read of any of them. A
    /// frame that does not decompress to exactly its size leaves the page zeroed and calls `failed`.
    /// - Throws: ``SnapshotRejection/checksumMismatch`` when a byte of the frame differs from what
    ///   was written.
    func deferredPage(from file: UnsafeRawBufferPointer, copyingInto frames: CompressedFrames, at start: Int,
                      failed: @escaping @Sendable () -> Void) throws(StrataError) -> ArenaPage {
        let frame = UnsafeRawBufferPointer(rebasing: file[deferredOffset..<end])
        try Self.check(frame, at: deferredOffset, against: deferredChecksum, "the chunk's deferred frame")
        let copied = frames.copy(frame, to: start)
        return ArenaPage(deferred: deferredSize, filledBy: DeferredBytes { page in
            do throws(StrataError) {
                try frames.decompress(copied, into: page)
                return true
            } catch {
                failed()
                return false
            }
        })
    }

    /// ``deferredPage(from:copyingInto:at:failed:)`` into memory of its own.
    func deferredPage(from file: UnsafeRawBufferPointer,
                      failed: @escaping @Sendable () -> Void) throws(StrataError) -> ArenaPage {
        try deferredPage(from: file, copyingInto: CompressedFrames(byteCount: deferredCompressedSize), at: 0, failed: failed)
    }

    /// Decompresses this chunk of `file` into a temporary buffer and hands its contents to `body`.
    func inflate<T>(from file: UnsafeRawBufferPointer,
                    _ body: (UnsafeRawBufferPointer) throws(StrataError) -> T) throws(StrataError) -> T {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: uncompressedSize, alignment: 8)
        defer { buffer.deallocate() }
        try inflate(from: file, with: LZ4Frame.Decompressor(), into: [buffer])
        return try body(UnsafeRawBufferPointer(buffer))
    }
}

/// LZ4 frames copied out of a snapshot file — a section's deferred frames, one after the other
/// in one allocation — kept compressed until each is decompressed, once, into its page. Freed
/// with the last page that has not decompressed its frame yet.
///
/// `@unchecked Sendable`, and safe: its bytes are written only by ``copy(_:to:)``, which a
/// load's jobs call on disjoint ranges (each its own chunks') before the load returns and
/// anything can read them (``Parallel/forEach(_:threads:_:)`` returns when every job has); after
/// that they are only read.
final class CompressedFrames: @unchecked Sendable {
    private let bytes: UnsafeMutableRawBufferPointer

    /// Room for `byteCount` bytes of frames, not touched yet.
    init(byteCount: Int) {
        bytes = .allocate(byteCount: Swift.max(byteCount, 1), alignment: 8)
        FreshMemory.preferHugePages(bytes)
    }

    deinit { bytes.deallocate() }

    /// Copies `frame` to `start` (its pages faulted in with one call first) and returns where it is.
    func copy(_ frame: UnsafeRawBufferPointer, to start: Int) -> Range<Int> {
        let range = start..<(start + frame.count)
        guard let source = frame.baseAddress, !frame.isEmpty else { return range }
        let destination = UnsafeMutableRawBufferPointer(rebasing: bytes[range])
        FreshMemory.populate(destination)
        destination.copyMemory(from: UnsafeRawBufferPointer(start: source, count: frame.count))
        return range
    }

    /// Decompresses the frame at `range` into `page`, which it must fill exactly
    /// (``LZ4Frame/decompress(_:into:)``).
    func decompress(_ range: Range<Int>, into page: UnsafeMutableRawBufferPointer) throws(StrataError) {
        try LZ4Frame.decompress(UnsafeRawBufferPointer(rebasing: bytes[range]), into: [page])
    }
}

extension SnapshotHeader.Entry {
    /// The refusal of a section whose chunks hold `counted` objects in all, not its ``objectCount``.
    func objectCountMismatch(_ counted: Int) -> StrataError {
        .snapshot(.undecodable, "\(entity)'s chunks hold \(counted) objects; its section records \(objectCount)", entity: entity)
    }
}

/// A loaded section: one entity's objects as a checked block, ready for whatever holds objects
/// (a context's graph; the archive does not know who).
struct LoadedSection: Sendable {
    let block: ColumnBlock
    var count: Int { block.count }
}
