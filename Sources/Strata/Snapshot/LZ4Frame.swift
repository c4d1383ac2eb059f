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

    /// Compresses `input` into one LZ4 frame that records its size.
    static func compress(_ input: UnsafeRawBufferPointer) throws -> Data {
        var preferences = LZ4F_preferences_t()
        preferences.frameInfo.contentChecksumFlag = LZ4F_noContentChecksum
        preferences.frameInfo.blockChecksumFlag = LZ4F_noBlockChecksum
        preferences.frameInfo.contentSize = UInt64(input.count)
        preferences.frameInfo.blockSizeID = LZ4F_max4MB
        let bound = LZ4F_compressFrameBound(input.count, &preferences)
        var output = Data(count: bound)
        let written = try output.withUnsafeMutableBytes { destination in
            try check(LZ4F_compressFrame(destination.baseAddress, bound, input.baseAddress, input.count, &preferences),
                      "LZ4 compression")
        }
        output.count = written
        return output
    }

    /// The largest block a frame of ours holds (``compress(_:)``'s `LZ4F_max4MB`). Given less room
    /// than that, `LZ4F_decompress` decodes each block into a buffer of its own and copies it
    /// out: a fresh 4 MiB of memory, faulted in page by page, and a copy, for every chunk a
    /// warm start read (2,000 page faults per loading thread, ~3 ms of each one's first chunks).
    static let largestBlock = 4 << 20

    /// The room to decompress a frame of `count` bytes into so that liblz4 decodes straight into
    /// it (``largestBlock`` at least).
    static func room(for count: Int) -> Int { max(count, largestBlock) }

    /// Decompresses one whole frame of exactly `count` bytes into the start of `destination`,
    /// which may be larger: give it ``room(for:)`` bytes.
    ///
    /// A frame that ends early is reported as ``SnapshotRejection/truncated``: `LZ4F_decompress`
    /// itself only answers "more input wanted" (a non-zero hint) when the input runs out
    /// mid-frame. Any LZ4 error (a malformed block) or a size that differs from `count` is
    /// ``SnapshotRejection/checksumMismatch``.
    static func decompress(_ input: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer, count: Int)
        throws(SnapshotRejection) {
        guard count <= destination.count else { throw .checksumMismatch }
        var context: OpaquePointer?
        guard LZ4F_isError(LZ4F_createDecompressionContext(&context, UInt32(LZ4F_VERSION))) == 0 else {
            throw .undecodable("cannot create an LZ4 decompression context")
        }
        defer { LZ4F_freeDecompressionContext(context) }
        var consumed = 0, produced = 0
        var hint = 1
        while consumed < input.count {
            var sourceSize = input.count - consumed
            var destinationSize = destination.count - produced
            hint = LZ4F_decompress(context, destination.baseAddress.map { $0 + produced }, &destinationSize,
                                   input.baseAddress! + consumed, &sourceSize, nil)
            if LZ4F_isError(hint) != 0 { throw .checksumMismatch }
            consumed += sourceSize
            produced += destinationSize
            if hint == 0 { break }
            if sourceSize == 0 && destinationSize == 0 { throw .checksumMismatch }   // larger than recorded
        }
        if hint != 0 { throw .truncated }
        if consumed != input.count || produced != count { throw .checksumMismatch }
    }
}

/// CRC-32 (IEEE), for the snapshot header.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index -> UInt32 in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

/// FNV-1a, 64-bit: a stable fingerprint of schema descriptions.
enum Fingerprint {
    static func of(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }
}
