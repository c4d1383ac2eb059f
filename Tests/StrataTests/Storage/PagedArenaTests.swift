import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `PagedArena` gives back every cell's bytes as they went in, across pages and values larger
/// than a page, and a copy that appends leaves the original as it was.
@Suite struct PagedArenaTests {
    private func bytes(_ count: Int, _ seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }
    }

    private func read(_ arena: PagedArena, _ payload: UInt64, _ count: Int) -> [UInt8] {
        arena.withCellBytes(payload, count: count) { Array($0) }
    }

    @Test func cellsReadBackAcrossPagesAndOversizedValues() {
        var (random, seed) = SeededRandom.forTest("cellsReadBackAcrossPagesAndOversizedValues")
        var arena = PagedArena()
        var cells: [(payload: UInt64, bytes: [UInt8])] = []
        for index in 0..<400 {
            // Mostly small values, some that fill a page's rest, some larger than a page.
            let size = [0, 1, 30, 5_000, 300_000, PagedArena.pageSize + 7][random.next(6) == 0 ? 4 + random.next(2) : random.next(4)]
            let value = bytes(size, index)
            let payload = value.withUnsafeBytes { arena.appendCell($0) }
            cells.append((payload, value))
        }
        #expect(arena.count == cells.reduce(0) { $0 + $1.bytes.count })
        #expect(arena.pageSizes.count > 2, "seed \(seed): the values should span several pages")
        // Only a value larger than a page makes a page larger than a page, and it is alone there.
        #expect(arena.pageSizes.filter { $0 > PagedArena.pageSize }.count
                == cells.filter { $0.bytes.count > PagedArena.pageSize }.count, "seed \(seed)")
        for (index, cell) in cells.enumerated() {
            #expect(read(arena, cell.payload, cell.bytes.count) == cell.bytes, "seed \(seed): cell \(index)")
        }
    }

    @Test func aCopyThatAppendsLeavesTheOriginalAsItWas() {
        var original = PagedArena()
        let first = bytes(PagedArena.pageSize - 10, 1), second = bytes(100, 2)
        let firstPayload = first.withUnsafeBytes { original.appendCell($0) }
        var copy = original
        let inCopy = second.withUnsafeBytes { copy.appendCell($0) }
        let inOriginal = bytes(5, 3).withUnsafeBytes { original.appendCell($0) }
        #expect(read(original, firstPayload, first.count) == first)
        #expect(read(copy, firstPayload, first.count) == first)
        #expect(read(copy, inCopy, second.count) == second)
        #expect(read(original, inOriginal, 5) == bytes(5, 3))
        #expect(original.count == first.count + 5 && copy.count == first.count + second.count)
    }

    /// Both sides of a copy append after sharing a page with room: neither writes the shared
    /// page (the other may be reading it); each starts a page of its own, and both keep reading
    /// the bytes written before the copy.
    @Test func aSharedPageIsNeverWrittenAgain() {
        var original = PagedArena()
        let before = bytes(300, 6)
        let beforePayload = before.withUnsafeBytes { original.appendCell($0) }
        var copy = original
        let inOriginal = bytes(40, 7).withUnsafeBytes { original.appendCell($0) }
        let inCopy = bytes(40, 8).withUnsafeBytes { copy.appendCell($0) }
        #expect(read(original, inOriginal, 40) == bytes(40, 7))
        #expect(read(copy, inCopy, 40) == bytes(40, 8))
        #expect(read(original, beforePayload, 300) == before && read(copy, beforePayload, 300) == before)
        #expect(original.pageSizes == [300, 40] && copy.pageSizes == [300, 40])
        // The original's new page is its own: it keeps appending there.
        let next = bytes(10, 9).withUnsafeBytes { original.appendCell($0) }
        #expect(next == inOriginal + 40 && read(original, next, 10) == bytes(10, 9))
        #expect(read(copy, inCopy, 40) == bytes(40, 8) && copy.count == 340 && original.count == 350)
    }

    @Test func anAdoptedArenaKeepsItsOffsets() throws {
        let block = bytes(3_000_000, 4)
        var arena = try #require(PagedArena(adopting: block))
        #expect(read(arena, 1_000, 2_000) == Array(block[1_000..<3_000]))
        let next = bytes(10, 5).withUnsafeBytes { arena.appendCell($0) }
        #expect(next >> 32 == 1, "an adopted page is full: the next value starts a page")
        #expect(read(arena, next, 10) == bytes(10, 5))
        #expect(read(arena, 0, 0).isEmpty)
    }
}
