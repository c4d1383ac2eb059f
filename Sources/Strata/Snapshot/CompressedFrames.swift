import Foundation

/// LZ4 frames copied out of a snapshot file — a section's deferred frames, one after the other
/// in one allocation — kept compressed until each is decompressed, once, into its page. Freed
/// with the last page that has not decompressed its frame yet.
///
/// `@unchecked Sendable`, and safe: its bytes are written only by ``copy(_:to:)``, which a
/// load's jobs call on disjoint ranges (each its own chunks') before the load returns and
/// anything can read them (``Parallel/forEach(_:threads:_:)`` returns when every job has); after
/// that they are only read.
final class CompressedFrames: @unchecked Sendable {
    private let bytes: UnsafeMutableRawBufferPointer

    /// Room for `byteCount` bytes of frames, not touched yet.
    init(byteCount: Int) {
        bytes = .allocate(byteCount: Swift.max(byteCount, 1), alignment: 8)
        FreshMemory.preferHugePages(bytes)
    }

    deinit { bytes.deallocate() }

    /// Copies `frame` to `start` (its pages faulted in with one call first) and returns where it is.
    func copy(_ frame: UnsafeRawBufferPointer, to start: Int) -> Range<Int> {
        let range = start..<(start + frame.count)
        guard let source = frame.baseAddress, !frame.isEmpty else { return range }
        let destination = UnsafeMutableRawBufferPointer(rebasing: bytes[range])
        FreshMemory.populate(destination)
        destination.copyMemory(from: UnsafeRawBufferPointer(start: source, count: frame.count))
        return range
    }

    /// Decompresses the frame at `range` into `page`, which it must fill exactly
    /// (``LZ4Frame/decompress(_:into:)``).
    func decompress(_ range: Range<Int>, into page: UnsafeMutableRawBufferPointer) throws(StrataError) {
        try LZ4Frame.decompress(UnsafeRawBufferPointer(rebasing: bytes[range]), into: [page])
    }
}
