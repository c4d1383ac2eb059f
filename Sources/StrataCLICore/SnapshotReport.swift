import Foundation
import Strata

/// What `strata snapshot info` prints about one snapshot.
struct SnapshotReport {
    let file: String
    let header: SnapshotHeader
    let store: String?
    let validity: SnapshotValidity?

    var ratio: Double {
        header.compressedBytes == 0 ? 1 : Double(header.uncompressedBytes) / Double(header.compressedBytes)
    }

    var lines: [String] {
        var lines: [String] = []
        func field(_ name: String, _ value: String) { lines.append(name.padding(toLength: 12, withPad: " ", startingAt: 0) + value) }
        field("snapshot", file)
        field("format", "version \(header.formatVersion)")
        field("store ID", header.storeID.uuidString)
        field("generation", Format.count(header.generation))
        field("created", ValueFormatter.iso8601(header.createdAt.timeIntervalSinceReferenceDate.rounded(.down)))
        field("schema", "fingerprint " + Self.hex(header.schemaFingerprint))
        field("objects", "\(Format.count(header.objectCount)) in \(header.entities.count) "
              + (header.entities.count == 1 ? "entity" : "entities"))
        field("size", "\(Format.bytes(header.fileSize)) file; payload \(Format.bytes(header.uncompressedBytes)) → "
              + "\(Format.bytes(header.compressedBytes)) compressed (\(Format.ratio(ratio)))")
        field("payload", "ok: every LZ4 frame decompresses and matches its checksum")
        lines.append("")
        lines.append("contents")
        var table = TextTable(["ENTITY", "OBJECTS", "CHUNKS", "UNCOMPRESSED", "DEFERRED", "COMPRESSED", "RATIO", "FINGERPRINT"],
                              rightAligned: [1, 2, 3, 4, 5, 6])
        for entry in header.entities {
            let entryRatio = entry.compressedBytes == 0 ? 1 : Double(entry.uncompressedBytes) / Double(entry.compressedBytes)
            table.add([entry.entity, Format.count(entry.objectCount), String(entry.chunks.count),
                       Format.bytes(entry.uncompressedBytes), Format.bytes(Self.deferredBytes(entry)),
                       Format.bytes(entry.compressedBytes), Format.ratio(entryRatio),
                       Self.hex(entry.schemaFingerprint)])
        }
        lines += table.lines(indent: "  ")
        if let store, let validity {
            lines.append("")
            field("store", store)
            field("valid", (validity.isValid ? "yes — " : "no — ") + validity.description)
        }
        return lines
    }

    var json: JSONValue {
        var members: [(String, JSONValue)] = [
            ("file", .string(file)),
            ("formatVersion", .int(header.formatVersion)),
            ("storeID", .string(header.storeID.uuidString)),
            ("generation", .int(header.generation)),
            ("createdAt", .string(ValueFormatter.iso8601(header.createdAt.timeIntervalSinceReferenceDate.rounded(.down)))),
            ("schemaFingerprint", .string(Self.hex(header.schemaFingerprint))),
            ("objects", .int(header.objectCount)),
            ("fileBytes", .int(header.fileSize)),
            ("uncompressedBytes", .int(header.uncompressedBytes)),
            ("compressedBytes", .int(header.compressedBytes)),
            ("compressionRatio", .number((ratio * 100).rounded() / 100)),
            ("entities", .array(header.entities.map { entry in
                .object([
                    ("entity", .string(entry.entity)),
                    ("objects", .int(entry.objectCount)),
                    ("chunks", .int(entry.chunks.count)),
                    ("uncompressedBytes", .int(entry.uncompressedBytes)),
                    ("deferredBytes", .int(Self.deferredBytes(entry))),
                    ("compressedBytes", .int(entry.compressedBytes)),
                    ("schemaFingerprint", .string(Self.hex(entry.schemaFingerprint))),
                ])
            })),
        ]
        if let store, let validity {
            members.append(("store", .string(store)))
            members.append(("valid", .bool(validity.isValid)))
            members.append(("validity", .string(validity.description)))
        }
        return .object(members)
    }

    /// The bytes of an entity's deferred attributes, decompressed: part of its uncompressed
    /// bytes, left compressed by a warm start until read.
    static func deferredBytes(_ entry: SnapshotHeader.Entry) -> Int { entry.chunks.reduce(0) { $0 + $1.deferredSize } }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }
}
