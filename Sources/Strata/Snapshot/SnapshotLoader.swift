import Foundation
import Logging

/// Reads a snapshot file and decodes it whole — or rejects it whole: a snapshot is never
/// partially loaded. (Deferred attributes' frames are checked whole and decompressed when first
/// read: ``SnapshotArchive/section(_:in:schema:deferredFailure:)``.)
struct SnapshotLoader {
    struct Loaded: Sendable {
        let header: SnapshotHeader
        let sections: [LoadedSection]
    }

    let registry: SchemaRegistry
    /// Where a deferred frame that fails to decompress when first read is reported (critical).
    var logger = Logger(label: "strata")

    /// Reads and checks the archive at `path`; with `indexingKeys` false, its blocks' keys are
    /// left for the caller to index (``indexKeys(_:)``), alongside other work.
    func load(_ path: String, indexingKeys: Bool = true) -> Result<Loaded, StrataError> {
        Result { () throws(StrataError) -> Loaded in
            // The keys are indexed once the file is unmapped: the index and the mapping are then
            // never in memory together.
            let parsed = try Snapshot.map(path).withUnsafeBytes { bytes in
                Result { () throws(StrataError) -> Loaded in try decodeOrThrow(bytes, path: path) }
            }.get()
            return indexingKeys ? try Self.indexingKeys(parsed) : parsed
        }.mapError { $0.with(path: path) }
    }

    func decode(_ bytes: UnsafeRawBufferPointer) -> Result<Loaded, StrataError> {
        Result { () throws(StrataError) -> Loaded in try Self.indexingKeys(try decodeOrThrow(bytes, path: nil)) }
    }

    /// Indexes every section's keys: two objects with one key are refused.
    private static func indexingKeys(_ loaded: Loaded) throws(StrataError) -> Loaded {
        var sections: [LoadedSection] = []
        for section in loaded.sections { sections.append(try indexKeys(section)) }
        return Loaded(header: loaded.header, sections: sections)
    }

    /// `section` with its block's keys indexed: two objects with one key are refused.
    static func indexKeys(_ section: LoadedSection) throws(StrataError) -> LoadedSection {
        var block = section.block
        try indexKeys(of: &block)
        return LoadedSection(block: block)
    }

    /// Indexes `block`'s keys (``ColumnBlock/indexKeys()``).
    /// - Throws: ``SnapshotRejection/undecodable`` naming the entity and the key two objects have.
    fileprivate static func indexKeys(of block: inout ColumnBlock) throws(StrataError) {
        do {
            try block.indexKeys()
        } catch {
            throw .snapshot(.undecodable, "\(block.schema.name): \((error as? StrataError)?.message ?? "\(error)")",
                            entity: block.schema.name)
        }
    }

    private func decodeOrThrow(_ bytes: UnsafeRawBufferPointer, path: String?) throws(StrataError) -> Loaded {
        let header = try SnapshotHeader.decode(bytes)
        var sections: [LoadedSection] = []
        for (entry, schema) in zip(header.entities, try header.matchedSchemas(registry.schemas)) {
            sections.append(try SnapshotArchive.section(entry, in: bytes, schema: schema,
                                                        deferredFailure: deferredFailure(entry.entity, path: path)))
        }
        return Loaded(header: header, sections: sections)
    }

    /// Reports that a deferred frame of `entity`'s section failed to decompress when first read.
    private func deferredFailure(_ entity: String, path: String?) -> @Sendable (Int) -> Void {
        { [logger] chunk in
            logger.critical("a snapshot's deferred values do not decompress: they read as zero bytes", metadata: [
                "snapshot": "\(path ?? "(bytes)")", "entity": "\(entity)", "chunk": "\(chunk)",
                "why": "its checksums match frames that are not LZ4: the file was made to pass them; remove it",
            ])
        }
    }
}

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

/// What writing a snapshot produced.
public struct SnapshotSummary: Sendable {
    /// The snapshot file.
    public let path: String
    /// The header of the file written.
    public let header: SnapshotHeader
    /// Time spent ordering, encoding, compressing and writing (after the state was committed).
    public let duration: Duration

    /// The size of the file written.
    public var fileSize: Int { header.fileSize }
    /// Uncompressed payload bytes divided by compressed payload bytes.
    public var compressionRatio: Double {
        header.compressedBytes == 0 ? 1 : Double(header.uncompressedBytes) / Double(header.compressedBytes)
    }
}

/// Decoding a snapshot from bytes, for the fuzzer and its corpus replay.
@_spi(Testing)
public enum SnapshotFuzzing {
    /// Decodes `bytes` as a snapshot of `entities` — header, checksums, every section, every
    /// object — and returns the number of objects, or the error refusing it (its
    /// ``StrataError/snapshotRejection`` set). Never traps. Each entity's first chunk is also
    /// read alone first, as a warm start's first screen reads it. Every deferred frame is then
    /// decompressed, as first reads would, and one that fails is reported as
    /// ``SnapshotRejection/checksumMismatch``.
    public static func decode(_ bytes: UnsafeRawBufferPointer, entities: [any Entity.Type]) -> Result<Int, StrataError> {
        let registry: SchemaRegistry
        do {
            registry = try SchemaRegistry(entities)
        } catch {
            return .failure(.snapshot(.schemaChanged, "the entities do not register: \(error)"))
        }
        var loader = SnapshotLoader(registry: registry)
        loader.logger = Logger(label: "strata.fuzzing") { _ in SwiftLogNoOpLogHandler() }
        for schema in registry.schemas {
            if case .success(let chunk) = loader.firstChunk(of: schema.name, in: bytes) { _ = chunk.block.fillDeferred() }
        }
        return loader.decode(bytes).flatMap { loaded in
            guard let failed = loaded.sections.first(where: { !$0.block.fillDeferred() }) else {
                return .success(loaded.sections.reduce(0) { $0 + $1.count })
            }
            let entity = failed.block.schema.name
            return .failure(.snapshot(.checksumMismatch, "a deferred frame of \(entity) does not decompress", entity: entity))
        }
    }
}

extension SnapshotFuzzing {
    /// `bytes` with the header's CRC-32 and every chunk's checksum rewritten to match what they
    /// cover, when the header can be read that far (else `bytes` as they are): the checksums
    /// refuse any changed byte, so a fuzzer that mutates a chunk reaches decompression and the
    /// cell checks behind them only through this.
    public static func repairingChecksums(_ bytes: Data) -> Data {
        var repaired = Data(bytes)   // indices from 0, whatever `bytes` is a slice of
        guard repaired.count >= 16 else { return bytes }
        let size = repaired.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self))) }
        func writeCRC(_ data: inout Data) {
            let crc = data.withUnsafeBytes { CRC32.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<(16 + size)])) }
            withUnsafeBytes(of: crc.littleEndian) { data.replaceSubrange((16 + size)..<(20 + size), with: $0) }
        }
        guard size <= repaired.count - 20 else { return bytes }
        writeCRC(&repaired)
        var positions: [Int] = []
        guard let header = repaired.withUnsafeBytes({ try? SnapshotHeader.decode($0, checksumPositions: &positions) })
        else { return repaired }
        let frames = header.entities.flatMap(\.chunks).flatMap { [$0.offset..<$0.deferredOffset, $0.deferredOffset..<$0.end] }
        for (frame, position) in zip(frames, positions) {
            // No deferred frame is recorded with a checksum of 0, as the writer records it.
            let checksum = frame.isEmpty ? 0 : repaired.withUnsafeBytes { XXH64.hash(UnsafeRawBufferPointer(rebasing: $0[frame])) }
            withUnsafeBytes(of: checksum.littleEndian) { repaired.replaceSubrange(position..<(position + 8), with: $0) }
        }
        writeCRC(&repaired)
        return repaired
    }

    /// A valid snapshot of `objects`, for seeding the fuzzer's corpus.
    public static func encode(_ objects: [any Entity], entities: [any Entity.Type]) throws -> Data {
        let registry = try SchemaRegistry(entities)
        var sections: [SnapshotArchive.Section] = []
        for schema in registry.schemas {
            let encoder = RowEncoder(schema: schema)
            var block = ColumnBlock(schema: schema)
            for object in objects where type(of: object).entityName == schema.name {
                try block.append(try encoder.encode(object))
            }
            sections.append(.init(schema: schema, chunks: [block]))
        }
        let written = try SnapshotArchive.encode(sections, storeID: UUID(), generation: 1, schemas: registry.schemas)
        return written.chunks.reduce(written.header, +)
    }
}

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
