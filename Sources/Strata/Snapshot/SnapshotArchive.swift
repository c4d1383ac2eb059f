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
    /// against its first chunk, then its whole archive: the schema is encoded as JSON once per
    /// process, not at each check, before the archive's load can start. Holds the few schemas a
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
