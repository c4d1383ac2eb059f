import CLZ4
import Foundation

/// LZ4 frame compression (system `liblz4`), behind one checked path: every LZ4F result goes
/// through ``check(_:_:)``, which turns an error code into a typed error. Frames carry no
/// content checksum: a snapshot checks each frame's own bytes (``XXH64``) before decompressing
/// it, which is faster and guards the same thing.
enum LZ4Frame {
    static func check(_ result: Int, _ what: String) throws -> Int {
        if LZ4F_isError(result) != 0 {
            throw StrataError(.invalidSnapshot, "\(what) failed: \(String(cString: LZ4F_getErrorName(result)))")
        }
        return result
    }

    /// The largest block a frame of ours holds (``compress(_:)``'s `LZ4F_max64KB`, blocks linked,
    /// so the window spans blocks and compresses as one 4 MiB block would). A frame is decoded
    /// straight into the room it is given wherever the room holds a whole block of this size;
    /// the rest goes through liblz4's own buffer of one block. Small blocks are what let a chunk
    /// be decompressed in two parts — its cells into a scratch buffer, its arena bytes straight
    /// into the block's arena (``decompress(_:into:)``) — with at most one block copied at the
    /// seam. Frames written with larger blocks (up to 4 MiB) still decode, through that buffer.
    static let largestBlock = 64 << 10

    /// Compresses `input` into one LZ4 frame that records its size.
    static func compress(_ input: UnsafeRawBufferPointer) throws -> Data {
        var preferences = LZ4F_preferences_t()
        preferences.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum
        preferences.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum
        preferences.frameInfo.contentSize = UInt64(input.count)
        preferences.frameInfo.blockSizeID = LZ4F_max64KB
        preferences.frameInfo.blockMode = LZ4F_blockLinked
        let bound = LZ4F_compressFrameBound(input.count, &preferences)
        var output = Data(count: bound)
        let written = try output.withUnsafeMutableBytes { destination in
            try check(LZ4F_compressFrame(destination.baseAddress, bound, input.baseAddress, input.count, &preferences),
                      "LZ4 compression")
        }
        output.count = written
        return output
    }

    /// Decompresses one whole frame into `parts` (``Decompressor/decompress(_:into:)``), with a
    /// context made for it.
    static func decompress(_ input: UnsafeRawBufferPointer, into parts: [UnsafeMutableRawBufferPointer])
        throws(StrataError) {
        try Decompressor().decompress(input, into: parts)
    }

    /// A decompression context, reused frame after frame: liblz4 keeps its buffers (the block
    /// at a part's seam, the window carried across it) between frames, so a loading
    /// thread allocates them once, not once a chunk, in fresh memory each time.
    ///
    /// Not `Sendable`: one thread uses it at a time.
    final class Decompressor {
        private let context: OpaquePointer

        init() throws(StrataError) {
            var context: OpaquePointer?
            let result = LZ4F_createDecompressionContext(&context, UInt32(LZ4F_VERSION))
            guard LZ4F_isError(result) == 0, let context else {
                throw .snapshot(.undecodable, "cannot create an LZ4 decompression context: "
                                + String(cString: LZ4F_getErrorName(result)))
            }
            self.context = context
        }

        deinit { LZ4F_freeDecompressionContext(context) }

        /// Decompresses one whole frame into `parts`, in order, filling each exactly: the
        /// frame's content is the parts' bytes one after the other (liblz4 lets the output move
        /// between calls; it keeps the window it needs).
        ///
        /// A frame that ends early is reported as ``SnapshotRejection/truncated``:
        /// `LZ4F_decompress` itself only answers "more input wanted" (a non-zero hint) when the
        /// input runs out mid-frame. Any LZ4 error (a malformed block), or content longer or
        /// shorter than the parts together, is ``SnapshotRejection/checksumMismatch``. Each
        /// message says how far into the frame it was found. Nothing is written past a part.
        func decompress(_ input: UnsafeRawBufferPointer, into parts: [UnsafeMutableRawBufferPointer])
            throws(StrataError) {
            LZ4F_resetDecompressionContext(context)   // whatever a frame refused before left
            var consumed = 0, part = 0, produced = 0   // `produced`: bytes written to `parts[part]`
            var hint = 1
            while consumed < input.count {
                while part < parts.count && produced == parts[part].count { (part, produced) = (part + 1, 0) }
                let room = part < parts.count ? parts[part].count - produced : 0
                var sourceSize = input.count - consumed
                var destinationSize = room
                hint = LZ4F_decompress(context, room == 0 ? nil : parts[part].baseAddress! + produced, &destinationSize,
                                       input.baseAddress! + consumed, &sourceSize, nil)
                if LZ4F_isError(hint) != 0 {
                    throw .snapshot(.checksumMismatch, "an LZ4 frame of \(input.count) bytes fails to decompress at its byte "
                                    + "\(consumed): \(String(cString: LZ4F_getErrorName(hint)))")
                }
                consumed += sourceSize
                produced += destinationSize
                if hint == 0 { break }
                if sourceSize == 0 && destinationSize == 0 {   // longer than the parts
                    throw .snapshot(.checksumMismatch, "an LZ4 frame of \(input.count) bytes decompresses to more than "
                                    + "its \(parts.reduce(0) { $0 + $1.count }) bytes")
                }
            }
            if hint != 0 {
                throw .snapshot(.truncated, "an LZ4 frame of \(input.count) bytes ends before its content does")
            }
            while part < parts.count && produced == parts[part].count { (part, produced) = (part + 1, 0) }
            if consumed != input.count || part != parts.count {
                let written = parts[..<part].reduce(produced) { $0 + $1.count }
                throw .snapshot(.checksumMismatch, consumed != input.count
                                ? "an LZ4 frame ends at its byte \(consumed), before the \(input.count) bytes recorded for it"
                                : "an LZ4 frame decompresses to \(written) bytes, not the \(parts.reduce(0) { $0 + $1.count }) recorded")
            }
        }
    }
}
