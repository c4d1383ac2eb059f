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
    static func indexKeys(of block: inout ColumnBlock) throws(StrataError) {
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
    func deferredFailure(_ entity: String, path: String?) -> @Sendable (Int) -> Void {
        { [logger] chunk in
            logger.critical("a snapshot's deferred values do not decompress: they read as zero bytes", metadata: [
                "snapshot": "\(path ?? "(bytes)")", "entity": "\(entity)", "chunk": "\(chunk)",
                "why": "its checksums match frames that are not LZ4: the file was made to pass them; remove it",
            ])
        }
    }
}
