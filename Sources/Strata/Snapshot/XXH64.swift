/// XXH64 (the xxHash specification's 64-bit hash, seed 0): the checksum of each LZ4 frame of a
/// snapshot (a chunk's and its deferred frame), checked before the frame is decompressed.
///
/// Written from the published specification, in Swift. It replaces the content checksum liblz4
/// can put in a frame (xxHash's 32-bit variant, over the decompressed bytes): this one reads
/// eight bytes at a time over four independent lanes, and over the compressed bytes, which are
/// fewer. A frame whose file bytes are exactly the ones written decompresses to exactly the
/// bytes written, so checking them before decompressing guards the same thing.
enum XXH64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    /// The hash of `bytes`.
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var offset = 0
        var accumulator: UInt64
        if count >= 32 {
            var lanes = (prime1 &+ prime2, prime2, UInt64(0), 0 &- prime1)
            while offset + 32 <= count {
                lanes.0 = round(lanes.0, word(bytes, offset))
                lanes.1 = round(lanes.1, word(bytes, offset + 8))
                lanes.2 = round(lanes.2, word(bytes, offset + 16))
                lanes.3 = round(lanes.3, word(bytes, offset + 24))
                offset += 32
            }
            accumulator = rotate(lanes.0, 1) &+ rotate(lanes.1, 7) &+ rotate(lanes.2, 12) &+ rotate(lanes.3, 18)
            for lane in [lanes.0, lanes.1, lanes.2, lanes.3] {
                accumulator = (accumulator ^ round(0, lane)) &* prime1 &+ prime4
            }
        } else {
            accumulator = prime5
        }
        accumulator &+= UInt64(count)
        while offset + 8 <= count {
            accumulator ^= round(0, word(bytes, offset))
            accumulator = rotate(accumulator, 27) &* prime1 &+ prime4
            offset += 8
        }
        if offset + 4 <= count {
            accumulator ^= UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) &* prime1
            accumulator = rotate(accumulator, 23) &* prime2 &+ prime3
            offset += 4
        }
        while offset < count {
            accumulator ^= UInt64(bytes[offset]) &* prime5
            accumulator = rotate(accumulator, 11) &* prime1
            offset += 1
        }
        accumulator ^= accumulator >> 33
        accumulator &*= prime2
        accumulator ^= accumulator >> 29
        accumulator &*= prime3
        accumulator ^= accumulator >> 32
        return accumulator
    }

    @inline(__always)
    private static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ lane: UInt64) -> UInt64 {
        rotate(accumulator &+ lane &* prime2, 31) &* prime1
    }

    @inline(__always)
    private static func rotate(_ value: UInt64, _ bits: UInt64) -> UInt64 {
        value << bits | value >> (64 - bits)
    }
}
