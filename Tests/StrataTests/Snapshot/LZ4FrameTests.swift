import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `LZ4Frame.decompress(_:into:count:)` decodes into room larger than the frame (so liblz4
/// writes straight into it) and still refuses a frame of any other size than the one recorded.
@Suite struct LZ4FrameTests {
    @Test(arguments: [0, 1, 1_000, 300_000, LZ4Frame.largestBlock - 3, LZ4Frame.largestBlock + 5_000])
    func framesDecodeIntoRoomAndRefuseAnyOtherSize(size: Int) throws {
        var (random, seed) = SeededRandom.forTest("framesDecodeIntoRoomAndRefuseAnyOtherSize \(size)")
        // Partly compressible: every third byte random, the others a repeating run of letters.
        var content = [UInt8](repeating: 0, count: size)
        for index in content.indices {
            content[index] = index % 3 == 0 ? UInt8(truncatingIfNeeded: random.next()) : UInt8(97 + index % 7)
        }
        let frame = try content.withUnsafeBytes { try LZ4Frame.compress($0) }
        let room = LZ4Frame.room(for: size)
        #expect(room >= size && room >= LZ4Frame.largestBlock)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: room, alignment: 8)
        defer { buffer.deallocate() }
        try frame.withUnsafeBytes { frame in
            try LZ4Frame.decompress(frame, into: buffer, count: size)
            #expect(Array(buffer[0..<size]) == content, "seed \(seed)")
            for claimed in [size - 1, size + 1, size / 2] where claimed >= 0 && claimed != size {
                #expect(throws: SnapshotRejection.checksumMismatch, "seed \(seed): claimed \(claimed)") {
                    try LZ4Frame.decompress(frame, into: buffer, count: claimed)
                }
            }
            // Room smaller than the frame: refused, not written past.
            if size > 0 {
                let small = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<(size - 1)])
                #expect(throws: SnapshotRejection.checksumMismatch) { try LZ4Frame.decompress(frame, into: small, count: size - 1) }
            }
        }
    }
}
