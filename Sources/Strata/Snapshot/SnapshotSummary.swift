import Foundation

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
