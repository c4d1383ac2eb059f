import Foundation

/// Encodes and decodes snapshot payloads: per entity, rows in schema order, each value tagged
/// with its storage class, in LZ4 frames of about 4 MiB compressed in parallel.
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

    /// One entity's rows to archive.
    struct Section: Sendable {
        let schema: EntitySchema
        let rows: [[DatabaseValue]]
    }

    /// What a write produced.
    struct Written: Sendable {
        let header: Data
        let chunks: [Data]
        /// What `header` says, as a reader decodes it.
        let described: SnapshotHeader
        var fileSize: Int { header.count + chunks.reduce(0) { $0 + $1.count } }
    }

    /// Encodes and compresses every section (chunks in parallel) and builds the header.
    static func encode(_ sections: [Section], storeID: UUID, generation: Int64, schemas: [EntitySchema]) throws -> Written {
        struct Job { let section: Int; let range: Range<Int> }
        var jobs: [Job] = []
        for (index, section) in sections.enumerated() {
            var start = 0
            repeat {
                let end = min(section.rows.count, start + objectsPerChunk)
                jobs.append(Job(section: index, range: start..<end))
                start = end
            } while start < section.rows.count
        }
        let results = Locked([Int: Result<(Data, Int), Error>]())
        let jobList = jobs
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            let job = jobList[index]
            let result = Result<(Data, Int), Error> {
                var writer = ByteWriter(capacity: job.range.count * 128)
                for row in sections[job.section].rows[job.range] {
                    for value in row { writer.append(value) }
                }
                let raw = writer.bytes
                return (try raw.withUnsafeBytes { try LZ4Frame.compress($0) }, raw.count)
            }
            results.withLock { $0[index] = result }
        }
        let compressed = try results.withLock { results in try jobs.indices.map { try results[$0]!.get() } }
        var layout: [(entity: String, fingerprint: UInt64, chunks: [(compressed: Int, uncompressed: Int, objects: Int)])] =
            sections.map { ($0.schema.name, fingerprint($0.schema), []) }
        for (index, job) in jobs.enumerated() {
            layout[job.section].chunks.append((compressed[index].0.count, compressed[index].1, job.range.count))
        }
        let header = SnapshotHeader.encode(storeID: storeID, generation: generation, createdAt: Date(),
                                           schemaFingerprint: fingerprint(schemas), sections: layout)
        return Written(header: header.bytes, chunks: compressed.map(\.0), described: header.header)
    }

    /// Decompresses and parses one section's chunks (in parallel), checking each row has one
    /// value per attribute, each of a storage class its attribute reads (``EntitySchema/checkRow(_:)``).
    /// Values are built from the rows only when a context is asked for them.
    static func section(_ entry: SnapshotHeader.Entry, in file: UnsafeRawBufferPointer,
                        schema: EntitySchema) throws(SnapshotRejection) -> LoadedSection {
        let width = schema.attributes.count
        let results = Locked([Int: Result<[[DatabaseValue]], SnapshotRejection>]())
        // The buffer outlives the concurrentPerform call, which returns only when every iteration has.
        nonisolated(unsafe) let file = file
        DispatchQueue.concurrentPerform(iterations: entry.chunks.count) { index in
            let chunk = entry.chunks[index]
            let result = Result<[[DatabaseValue]], SnapshotRejection> { () throws(SnapshotRejection) -> [[DatabaseValue]] in
                try chunk.inflate(from: file) { (contents) throws(SnapshotRejection) -> [[DatabaseValue]] in
                    var reader = ByteReader(contents)
                    var rows: [[DatabaseValue]] = []
                    rows.reserveCapacity(chunk.objectCount)
                    do {
                        for _ in 0..<chunk.objectCount {
                            var row: [DatabaseValue] = []
                            row.reserveCapacity(width)
                            for _ in 0..<width { row.append(try reader.readValue()) }
                            try schema.checkRow(row)
                            rows.append(row)
                        }
                    } catch {
                        throw SnapshotRejection.undecodable("\(entry.entity): \(error)")
                    }
                    guard reader.remaining == 0 else { throw SnapshotRejection.undecodable("\(entry.entity): trailing bytes") }
                    return rows
                }
            }
            results.withLock { $0[index] = result }
        }
        var rows: [[DatabaseValue]] = []
        rows.reserveCapacity(entry.objectCount)
        for index in entry.chunks.indices {
            switch results.withLock({ $0[index]! }) {
            case .success(let chunk): rows.append(contentsOf: chunk)
            case .failure(let rejection): throw rejection
            }
        }
        guard rows.count == entry.objectCount else { throw .undecodable("\(entry.entity): object count mismatch") }
        return LoadedSection(schema: schema, rows: rows)
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

/// A decoded section's rows, ready to fill whatever holds objects (``SectionSink``: a context's graph).
struct LoadedSection: Sendable {
    let schema: EntitySchema
    let rows: [[DatabaseValue]]
    var count: Int { rows.count }

    func fill(_ sink: some SectionSink, asOf sequence: UInt64) throws {
        try sink.fill(schema, rows: rows, asOf: sequence)
    }
}

/// Where a loaded section's rows go; the archive does not know who holds them.
protocol SectionSink {
    func fill(_ schema: EntitySchema, rows: [[DatabaseValue]], asOf sequence: UInt64) throws
}
