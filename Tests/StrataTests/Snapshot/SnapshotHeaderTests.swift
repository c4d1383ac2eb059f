import Foundation
@_spi(Testing) @testable import Strata
import Testing

/// A header that cannot be read says what it could not read and where, with the kind of
/// problem it is (``SnapshotRejection``): never a catch-all.
@Suite struct SnapshotHeaderTests {
    private func header(entity: String) -> Data {
        SnapshotHeader.encode(storeID: UUID(), generation: 1, createdAt: Date(), schemaFingerprint: 7,
                              sections: [(entity: entity, fingerprint: 9, chunks: [])]).bytes
    }

    private func decode(_ bytes: Data) -> StrataError? {
        #expect(throws: StrataError.self) { try bytes.withUnsafeBytes { try SnapshotHeader.decode($0) } }
    }

    @Test func invalidUTF8InAnEntityNameIsUndecodableNotTruncated() throws {
        var bytes = header(entity: "Article")
        let name = try #require(bytes.range(of: Data("Article".utf8)))
        bytes[name.lowerBound] = 0xFF
        bytes = SnapshotFuzzing.repairingChecksums(bytes)   // a good CRC: only the name is wrong
        let error = decode(bytes)
        #expect(error?.snapshotRejection == .undecodable)
        #expect(error?.message == "the snapshot cannot be decoded: the entity name of section 0 is not valid UTF-8 "
                + "(7 bytes after its length at byte \(name.lowerBound - 1))")
    }

    @Test func aFileCutShortNamesWhereItEnds() throws {
        let bytes = header(entity: "Article")
        let inVersion = decode(bytes.prefix(10))
        #expect(inVersion?.snapshotRejection == .truncated)
        #expect(inVersion?.message == "the snapshot is truncated: it ends at byte 10, inside the format version "
                + "(4 bytes at byte 8)")
        let inHeader = decode(bytes.prefix(bytes.count - 1))
        #expect(inHeader?.snapshotRejection == .truncated)
        #expect(inHeader?.message == "the snapshot is truncated: it ends at byte \(bytes.count - 1), inside its header "
                + "(\(bytes.count) bytes)")
    }

    @Test func aDamagedHeaderNamesItsChecksums() throws {
        var bytes = header(entity: "Article")
        bytes[20] ^= 0x01
        let error = decode(bytes)
        #expect(error?.snapshotRejection == .checksumMismatch)
        #expect(error?.message.hasPrefix("the snapshot fails its checksum: the header's CRC-32 (at byte \(bytes.count - 4)) is 0x")
                == true, "\(String(describing: error))")
    }
}
