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

    /// A page of a change set's cells, taken by two arenas: a small one is copied after each
    /// arena's own bytes (no new page while the last one has room), a large one becomes a page
    /// of both as it is; either way its offsets plus the base read its bytes, and after taking a
    /// large page an arena's own bytes go to a page of their own (the taken one is shared).
    @Test func takenPagesReadBackAtTheirBase() {
        func page(_ bytes: [UInt8]) -> ArenaPage {
            let page = ArenaPage(capacity: bytes.count)
            _ = bytes.withUnsafeBytes { page.appendCell($0) }
            return page
        }
        let small = bytes(PagedArena.copiedPageLimit, 10), large = bytes(PagedArena.copiedPageLimit + 1, 11)
        let smallPage = page(small), largePage = page(large)
        var arena = PagedArena()
        let own = bytes(100, 12).withUnsafeBytes { arena.appendCell($0) }
        let smallBase = arena.take(smallPage)
        #expect(smallBase == own + 100, "copied right after the arena's own bytes")
        #expect(arena.pageSizes == [100 + small.count])
        let largeBase = arena.take(largePage)
        #expect(largeBase == 1 << 32, "a page of its own")
        #expect(arena.pageSizes == [100 + small.count, large.count])
        let after = bytes(7, 13).withUnsafeBytes { arena.appendCell($0) }
        #expect(after == 2 << 32, "the taken page is shared: never written")
        for offset in [0, 1, 5_000, small.count - 9] {
            #expect(read(arena, smallBase + UInt64(offset), 9) == Array(small[offset..<offset + 9]))
            #expect(read(arena, largeBase + UInt64(offset), 10) == Array(large[offset..<offset + 10]))
        }
        #expect(read(arena, own, 100) == bytes(100, 12) && read(arena, after, 7) == bytes(7, 13))
        #expect(arena.count == 100 + small.count + large.count + 7)
        // Another arena takes the same pages: the same bytes, at its own bases.
        var other = PagedArena()
        let otherLarge = other.take(largePage), otherSmall = other.take(smallPage)
        #expect(otherLarge == 0 && otherSmall == 1 << 32)
        #expect(read(other, otherLarge + UInt64(large.count - 10), 10) == Array(large.suffix(10)))
        #expect(read(other, otherSmall, small.count) == small)
        #expect(other.take(ArenaPage(capacity: 1)) == 0 && other.count == small.count + large.count, "an empty page adds nothing")
    }
}
