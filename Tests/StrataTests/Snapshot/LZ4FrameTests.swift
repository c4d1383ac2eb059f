import CLZ4
import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `LZ4Frame.decompress(_:into:)` decodes one frame into parts — a chunk's cells into a scratch
/// buffer, its arena bytes straight into the block's arena — wherever the seam falls, never
/// writes past a part, and refuses a frame of any other size than the parts hold together.
@Suite struct LZ4FrameTests {
    static let sizes = [0, 1, 1_000, 300_000, LZ4Frame.largestBlock - 3, LZ4Frame.largestBlock + 5_000,
                        3 * LZ4Frame.largestBlock + 17]

    /// Partly compressible content: every third byte random, the others a repeating run of letters.
    private func content(_ size: Int, _ random: inout SeededRandom) -> [UInt8] {
        (0..<size).map { index in index % 3 == 0 ? UInt8(truncatingIfNeeded: random.next()) : UInt8(97 + index % 7) }
    }

    /// Decompresses `frame` into parts of `sizes`, each followed by guard bytes, and returns the
    /// parts' bytes joined, or the rejection; the guard bytes must be untouched either way.
    private func decode(_ frame: Data, parts sizes: [Int]) -> Result<[UInt8], StrataError> {
        let guardBytes = 64
        let buffers = sizes.map { UnsafeMutableRawBufferPointer.allocate(byteCount: $0 + guardBytes, alignment: 8) }
        defer { for buffer in buffers { buffer.deallocate() } }
        for buffer in buffers { buffer.initializeMemory(as: UInt8.self, repeating: 0xEE) }
        let result = frame.withUnsafeBytes { frame in
            Result { () throws(StrataError) in
                try LZ4Frame.decompress(frame, into: zip(buffers, sizes).map { UnsafeMutableRawBufferPointer(rebasing: $0[0..<$1]) })
            }
        }
        for (buffer, size) in zip(buffers, sizes) {
            #expect(buffer[size...].allSatisfy { $0 == 0xEE }, "a part of \(size) bytes was written past")
        }
        return result.map { zip(buffers, sizes).flatMap { Array($0[0..<$1]) } }
    }

    @Test(arguments: sizes)
    func framesDecodeIntoPartsAtAnySeam(size: Int) throws {
        var (random, seed) = SeededRandom.forTest("framesDecodeIntoPartsAtAnySeam \(size)")
        let content = content(size, &random)
        let frame = try content.withUnsafeBytes { try LZ4Frame.compress($0) }
        // Seams at the ends, on and beside block boundaries, and at random places.
        var seams = [0, size, min(size, 1), max(0, size - 1)]
        for block in stride(from: LZ4Frame.largestBlock, to: size, by: LZ4Frame.largestBlock) {
            seams += [block - 1, block, block + 1]
        }
        seams += (0..<4).map { _ in size == 0 ? 0 : Int(random.next() % UInt64(size + 1)) }
        for seam in seams {
            #expect(try decode(frame, parts: [seam, size - seam]).get() == content, "seed \(seed): seam \(seam)")
        }
        if size > 2 {
            let first = Int(random.next() % UInt64(size / 2)), second = size / 2
            #expect(try decode(frame, parts: [first, second - first, size - second]).get() == content,
                    "seed \(seed): three parts at \(first) and \(second)")
        }
    }

    @Test(arguments: sizes)
    func aFrameOfAnotherSizeThanItsPartsIsRefused(size: Int) throws {
        var (random, seed) = SeededRandom.forTest("aFrameOfAnotherSizeThanItsPartsIsRefused \(size)")
        let frame = try content(size, &random).withUnsafeBytes { try LZ4Frame.compress($0) }
        for claimed in [size - 1, size + 1, size / 2] where claimed >= 0 && claimed != size {
            #expect(decode(frame, parts: [claimed / 2, claimed - claimed / 2]).rejection == .checksumMismatch,
                    "seed \(seed): claimed \(claimed)")
        }
        // Cut short: the frame's end is missing.
        if frame.count > 8 {
            #expect(decode(frame.prefix(frame.count - 5), parts: [size]).rejection == .truncated, "seed \(seed)")
        }
    }

    /// Snapshots written before chunks were framed in 64 KiB blocks hold 4 MiB blocks: liblz4
    /// decodes those through its own buffer, and the parts still get every byte.
    @Test func framesOfLargerBlocksStillDecodeIntoParts() throws {
        var (random, seed) = SeededRandom.forTest("framesOfLargerBlocksStillDecodeIntoParts")
        let content = content(300_000, &random)
        var preferences = LZ4F_preferences_t()
        preferences.frameInfo.contentSize = UInt64(content.count)
        preferences.frameInfo.blockSizeID = LZ4F_max4MB
        var frame = Data(count: LZ4F_compressFrameBound(content.count, &preferences))
        let written = frame.withUnsafeMutableBytes { destination in
            content.withUnsafeBytes { LZ4F_compressFrame(destination.baseAddress, destination.count, $0.baseAddress, $0.count, &preferences) }
        }
        #expect(LZ4F_isError(written) == 0)
        frame.count = written
        for seam in [0, 1, 123_457, 300_000] {
            #expect(try decode(frame, parts: [seam, content.count - seam]).get() == content, "seed \(seed): seam \(seam)")
        }
    }
}
