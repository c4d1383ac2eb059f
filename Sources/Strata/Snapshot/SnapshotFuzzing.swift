import Foundation
import Logging

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
