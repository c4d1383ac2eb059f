@_spi(Testing) import Strata
import Foundation

/// The entities the fuzzed snapshots claim to hold: every kind of attribute.
struct FuzzArticle: Entity {
    var id: String
    var feedID: Int64
    var title: String
    var summary: String?
    var published: Date
    var isRead: Bool
    var score: Double
    var tags: [String]
    static let isResident = true
    static let deferredAttributes = ["summary", "tags"]
}

struct FuzzTag: Entity {
    var id: Int64
    var name: String
    var data: Data
    static let isResident = true
}

/// One fuzz input: any byte string must decode or be rejected, never trap or leak — as it is,
/// and with its checksums rewritten to match (``SnapshotFuzzing/repairingChecksums(_:)``), so
/// that a mutated chunk reaches decompression and the cell checks instead of stopping at its
/// checksum. Also exported under libFuzzer's name, for its own `main` when the linker brings that in.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzSnapshot(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let entities: [any Entity.Type] = [FuzzArticle.self, FuzzTag.self]
    _ = SnapshotFuzzing.decode(UnsafeRawBufferPointer(start: data, count: size), entities: entities)
    let repaired = SnapshotFuzzing.repairingChecksums(Data(bytes: data, count: size))
    _ = repaired.withUnsafeBytes { SnapshotFuzzing.decode($0, entities: entities) }
    return 0
}

/// Writes a small valid snapshot of both entities: a seed the fuzzer mutates from.
func writeSeed(to path: String) -> CInt {
    var objects: [any Entity] = [FuzzTag(id: 1, name: "tag", data: Data([1, 2, 3]))]
    for index in 0..<3 {
        let article = FuzzArticle(id: "a\(index)", feedID: Int64(index), title: "Title \(index)",
                                  summary: index == 1 ? nil : "Summary", published: Date(timeIntervalSinceReferenceDate: Double(index)),
                                  isRead: index == 2, score: 0.5, tags: ["x"])
        objects.append(article)
    }
    do {
        try SnapshotFuzzing.encode(objects, entities: [FuzzArticle.self, FuzzTag.self]).write(to: URL(fileURLWithPath: path))
        return 0
    } catch {
        print("cannot write the seed: \(error)")
        return 1
    }
}
