import Foundation

/// The header of a snapshot file: who it belongs to, what state it reflects, and a table of
/// contents. Its byte layout is specified in the DocC article FileFormat.md ("The snapshot file").
public struct SnapshotHeader: Sendable, Hashable {
    /// The first eight bytes of every snapshot file.
    public static let magic = Array("STRATASN".utf8)
    /// How many times its compressed size a chunk may claim to decompress to: LZ4 writes at most
    /// 255 bytes per byte it reads (a long match), so more cannot be true.
    static let largestExpansion = 256

    /// The format version this build writes and reads.
    public static let currentFormatVersion: UInt32 = 5

    /// The file's format version (``currentFormatVersion`` when this build wrote it).
    public let formatVersion: UInt32
    /// The identity of the store the archive was taken from.
    public let storeID: UUID
    /// The change-log generation the archive reflects (everything up to it, at least).
    public let generation: Int64
    /// When the archive was written.
    public let createdAt: Date
    /// A fingerprint of every registered entity's schema.
    public let schemaFingerprint: UInt64
    /// One entry per archived entity.
    public let entities: [Entry]
    /// The size of the whole file.
    public let fileSize: Int

    /// One entity's section.
    public struct Entry: Sendable, Hashable {
        /// The entity's name.
        public let entity: String
        /// The fingerprint of the entity's schema when archived; a different one refuses the section.
        public let schemaFingerprint: UInt64
        /// The number of archived objects of the entity.
        public let objectCount: Int
        /// The section's LZ4 frames, in file order.
        public let chunks: [Chunk]
        /// The section's payload size before compression, deferred bytes included.
        public var uncompressedBytes: Int { chunks.reduce(0) { $0 + $1.uncompressedSize + $1.deferredSize } }
        /// The section's payload size in the file, deferred frames included.
        public var compressedBytes: Int { chunks.reduce(0) { $0 + $1.compressedSize + $1.deferredCompressedSize } }
        /// Where the section's compressed bytes are in the file.
        public var byteRange: Range<Int> { (chunks.first?.offset ?? 0)..<(chunks.last?.end ?? 0) }
    }

    /// One chunk of a section: an LZ4 frame of its objects' cells and arena, and — for an entity
    /// with ``EntitySchema/deferredAttributes`` — a second frame right after it, of the deferred
    /// attributes' bytes. Each is compressed independently (so chunks compress and decompress in
    /// parallel, and a deferred frame when first read).
    public struct Chunk: Sendable, Hashable {
        /// Where the frame starts in the file.
        public let offset: Int
        /// The frame's size in the file.
        public let compressedSize: Int
        /// The size of the rows it holds, decompressed.
        public let uncompressedSize: Int
        /// The number of objects in the frame.
        public let objectCount: Int
        /// The size of the frame's arena (its text and blob bytes, the end of its decompressed
        /// bytes): where its cells end, known before it is decompressed.
        public let arenaSize: Int
        /// XXH64 (seed 0) of the frame's bytes in the file (``Snapshot/checksum(ofChunk:)``),
        /// checked before the frame is decompressed.
        public let checksum: UInt64
        /// The size of the deferred frame in the file (at ``deferredOffset``); 0 when the entity
        /// defers nothing.
        public let deferredCompressedSize: Int
        /// The size of the deferred attributes' bytes, decompressed.
        public let deferredSize: Int
        /// XXH64 (seed 0) of the deferred frame's bytes in the file, checked when the archive is
        /// loaded (the frame is decompressed when one of its values is first read).
        public let deferredChecksum: UInt64

        /// Where the deferred frame starts: right after the chunk's frame.
        public var deferredOffset: Int { offset + compressedSize }
        /// Where the chunk's frames end.
        public var end: Int { deferredOffset + deferredCompressedSize }
    }

    /// The payload size of every section before compression.
    public var uncompressedBytes: Int { entities.reduce(0) { $0 + $1.uncompressedBytes } }
    /// The payload size of every section in the file.
    public var compressedBytes: Int { entities.reduce(0) { $0 + $1.compressedBytes } }
    /// The number of archived objects, every entity together.
    public var objectCount: Int { entities.reduce(0) { $0 + $1.objectCount } }

    /// A chunk's record in the header: offset, sizes, objects, arena and checksum, then the
    /// deferred frame's size, its decompressed size and its checksum, 8 bytes each.
    static let chunkRecordSize = 72

    /// What the header records of a chunk written (its offset follows from the ones before).
    struct ChunkLayout {
        var compressed: Int, uncompressed: Int, objects: Int, arena: Int, checksum: UInt64
        var deferredCompressed: Int, deferred: Int, deferredChecksum: UInt64
    }

    /// Writes the header for sections whose chunks start right after it.
    /// Returns the bytes and the header they describe (what ``decode(_:)`` would read back from
    /// the whole file), so a writer never has to decode what it just built.
    static func encode(storeID: UUID, generation: Int64, createdAt: Date, schemaFingerprint: UInt64,
                       sections: [(entity: String, fingerprint: UInt64, chunks: [ChunkLayout])])
        -> (bytes: Data, header: SnapshotHeader) {
        func body(payloadStart: Int) -> Data {
            var writer = ByteWriter()
            withUnsafeBytes(of: storeID.uuid) { writer.appendRaw(Data($0)) }
            writer.append(generation)
            writer.append(createdAt.timeIntervalSince1970)
            writer.append(schemaFingerprint)
            writer.append(UInt32(sections.count))
            var offset = payloadStart
            for section in sections {
                writer.append(section.entity)
                writer.append(section.fingerprint)
                writer.append(UInt64(section.chunks.reduce(0) { $0 + $1.objects }))
                writer.append(UInt32(section.chunks.count))
                for chunk in section.chunks {
                    writer.append(UInt64(offset))
                    writer.append(UInt64(chunk.compressed))
                    writer.append(UInt64(chunk.uncompressed))
                    writer.append(UInt64(chunk.objects))
                    writer.append(UInt64(chunk.arena))
                    writer.append(chunk.checksum)
                    writer.append(UInt64(chunk.deferredCompressed))
                    writer.append(UInt64(chunk.deferred))
                    writer.append(chunk.deferredChecksum)
                    offset += chunk.compressed + chunk.deferredCompressed
                }
            }
            return writer.data
        }
        // Offsets are fixed-width, so the body's size does not depend on them.
        let size = body(payloadStart: 0).count
        var header = ByteWriter()
        header.appendRaw(Data(magic))
        header.append(currentFormatVersion)
        header.append(UInt32(size))
        let payloadStart = 16 + size + 4
        header.appendRaw(body(payloadStart: payloadStart))
        let crc = header.data.withUnsafeBytes { CRC32.checksum($0) }
        header.append(crc)
        var offset = payloadStart
        let entries = sections.map { section in
            Entry(entity: section.entity, schemaFingerprint: section.fingerprint,
                  objectCount: section.chunks.reduce(0) { $0 + $1.objects },
                  chunks: section.chunks.map { chunk in
                      defer { offset += chunk.compressed + chunk.deferredCompressed }
                      return Chunk(offset: offset, compressedSize: chunk.compressed, uncompressedSize: chunk.uncompressed,
                                   objectCount: chunk.objects, arenaSize: chunk.arena, checksum: chunk.checksum,
                                   deferredCompressedSize: chunk.deferredCompressed, deferredSize: chunk.deferred,
                                   deferredChecksum: chunk.deferredChecksum)
                  })
        }
        let described = SnapshotHeader(formatVersion: currentFormatVersion, storeID: storeID, generation: generation,
                                       createdAt: Date(timeIntervalSince1970: createdAt.timeIntervalSince1970),
                                       schemaFingerprint: schemaFingerprint, entities: entries, fileSize: offset)
        return (header.data, described)
    }

    /// Parses and checks a header; every problem is a ``StrataError`` whose
    /// ``StrataError/snapshotRejection`` says its kind and whose message says what and where.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(StrataError) -> SnapshotHeader {
        var positions: [Int] = []
        return try decode(bytes, checksumPositions: &positions)
    }

    /// ``decode(_:)``, also listing where each chunk's ``Chunk/checksum`` and
    /// ``Chunk/deferredChecksum`` are in `bytes`, two per chunk, in order (for the fuzzer, which
    /// writes checksums that match its mutations).
    static func decode(_ bytes: UnsafeRawBufferPointer,
                       checksumPositions: inout [Int]) throws(StrataError) -> SnapshotHeader {
        if bytes.isEmpty { throw .snapshot(.empty) }
        guard bytes.count >= 8, Array(bytes[0..<8]) == magic else { throw .snapshot(.badMagic) }
        var reader = ByteReader(bytes, offset: 8)
        let version = try reader.read(UInt32.self, "the format version")
        guard version == currentFormatVersion else {
            throw .snapshot(.unsupportedFormat(Int(version)), "this build reads version \(currentFormatVersion)")
        }
        let size = Int(try reader.read(UInt32.self, "the header's size"))
        guard bytes.count >= 16 + size + 4 else {
            throw .snapshot(.truncated, "it ends at byte \(bytes.count), inside its header (\(16 + size + 4) bytes)")
        }
        var crcReader = ByteReader(bytes, offset: 16 + size)
        let stored = try crcReader.read(UInt32.self, "the header's CRC-32")
        let computed = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(16 + size)]))
        guard stored == computed else {
            throw .snapshot(.checksumMismatch, "the header's CRC-32 (at byte \(16 + size)) is \(stored.hexadecimal); "
                            + "its bytes' is \(computed.hexadecimal)")
        }
        // The fixed fields (store ID, generation, date, fingerprint, entity count) are in the
        // body: a body too short for them is not read past (a crafted file with a good CRC and
        // an empty body trapped here).
        guard size >= 16 + 8 + 8 + 8 + 4 else {
            throw .snapshot(.undecodable, "the header's body is \(size) bytes, too short for its fixed fields (44)")
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { destination in
            for index in 0..<16 { destination[index] = bytes[16 + index] }
        }
        reader = ByteReader(bytes, offset: 32)
        let generation = try reader.read(Int64.self, "the generation")
        let created = try reader.readDouble("the creation date")
        let fingerprint = try reader.read(UInt64.self, "the schema fingerprint")
        let count = Int(try reader.read(UInt32.self, "the section count"))
        var entries: [Entry] = []
        for section in 0..<count {
            let name = try reader.readString("the entity name of section \(section)")
            let entityFingerprint = try reader.read(UInt64.self, "\(name)'s schema fingerprint")
            let objects = try reader.readSize("\(name)'s object count")
            let chunkCount = Int(try reader.read(UInt32.self, "\(name)'s chunk count"))
            guard chunkCount <= reader.remaining / Self.chunkRecordSize else {
                throw .snapshot(.truncated, "it ends at byte \(bytes.count), inside \(name)'s \(chunkCount) chunk "
                                + "records (\(Self.chunkRecordSize) bytes each at byte \(reader.offset))", entity: name)
            }
            var chunks: [Chunk] = []
            for number in 0..<chunkCount {
                func field(_ what: String) -> String { "\(what) of \(name)'s chunk \(number)" }
                let offset = try reader.readSize(field("the offset")), compressedSize = try reader.readSize(field("the size"))
                let uncompressedSize = try reader.readSize(field("the decompressed size"))
                let objectCount = try reader.readSize(field("the object count"))
                let arenaSize = try reader.readSize(field("the arena size"))
                checksumPositions.append(reader.offset)
                let checksum = try reader.read(UInt64.self, field("the checksum"))
                let deferredCompressedSize = try reader.readSize(field("the deferred frame's size"))
                let deferredSize = try reader.readSize(field("the deferred size"))
                checksumPositions.append(reader.offset)
                let chunk = Chunk(offset: offset, compressedSize: compressedSize, uncompressedSize: uncompressedSize,
                                  objectCount: objectCount, arenaSize: arenaSize, checksum: checksum,
                                  deferredCompressedSize: deferredCompressedSize, deferredSize: deferredSize,
                                  deferredChecksum: try reader.read(UInt64.self, field("the deferred checksum")))
                guard chunk.offset <= bytes.count, chunk.compressedSize <= bytes.count - chunk.offset,
                      chunk.deferredCompressedSize <= bytes.count - chunk.deferredOffset else {
                    throw .snapshot(.truncated, "it ends at byte \(bytes.count), inside \(name)'s chunk \(number) "
                                    + "(\(chunk.compressedSize) + \(chunk.deferredCompressedSize) bytes at byte \(chunk.offset))",
                                    entity: name)
                }
                // LZ4 makes at most 255 bytes of each byte it reads: a larger claim is a lie that
                // would make a loader allocate what the file cannot fill (a crafted header with a
                // good CRC asked for terabytes).
                // Each object takes at least a tag (a byte) of its cells, and the arena is the
                // end of the bytes; the entity's schema bounds the cells closer when the
                // section is read (ColumnBlock.checkCellBytes).
                // A page holds at most 4 GiB: the arena and the deferred bytes are each one page.
                guard chunk.uncompressedSize <= chunk.compressedSize * Self.largestExpansion,
                      chunk.arenaSize <= chunk.uncompressedSize,
                      chunk.objectCount <= chunk.uncompressedSize - chunk.arenaSize,
                      chunk.deferredSize <= Int(UInt32.max),
                      chunk.deferredSize <= chunk.deferredCompressedSize * Self.largestExpansion else {
                    throw .snapshot(.undecodable, "\(name)'s chunk \(number) (\(chunk.compressedSize) bytes at byte \(chunk.offset)) "
                                    + "claims \(chunk.uncompressedSize) decompressed, an arena of \(chunk.arenaSize) "
                                    + "and \(chunk.objectCount) objects, and \(chunk.deferredSize) deferred "
                                    + "bytes in \(chunk.deferredCompressedSize)", entity: name)
                }
                chunks.append(chunk)
            }
            entries.append(Entry(entity: name, schemaFingerprint: entityFingerprint, objectCount: objects, chunks: chunks))
        }
        return SnapshotHeader(formatVersion: version, storeID: UUID(uuid: uuid), generation: generation,
                              createdAt: Date(timeIntervalSince1970: created), schemaFingerprint: fingerprint,
                              entities: entries, fileSize: bytes.count)
    }
}

extension SnapshotHeader.Entry {
    /// The refusal of a section whose chunks hold `counted` objects in all, not its ``objectCount``.
    func objectCountMismatch(_ counted: Int) -> StrataError {
        .snapshot(.undecodable, "\(entity)'s chunks hold \(counted) objects; its section records \(objectCount)", entity: entity)
    }
}

extension FixedWidthInteger {
    /// The value in hexadecimal ("0x1f"), for a message naming a checksum.
    var hexadecimal: String { "0x" + String(self, radix: 16) }
}
