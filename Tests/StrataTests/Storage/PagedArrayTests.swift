import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `PagedArray` behaves as a plain array under random operations — across page boundaries, the
/// lone first page's growth and every bulk path — and copies never see each other's writes.
@Suite struct PagedArrayTests {
    /// Several arrays that started as copies of each other, each beside its `[UInt64]` model;
    /// every operation goes to one of them, and all must still equal their models.
    @Test func copiesWrittenInTurnEachEqualAPlainArray() {
        var (random, seed) = SeededRandom.forTest("copiesWrittenInTurnEachEqualAPlainArray")
        let page = PagedArray<UInt64>.pageCapacity
        var arrays = [PagedArray<UInt64>()]
        var models: [[UInt64]] = [[]]
        var largest = 0
        // Few steps, arrays of a few pages: under AddressSanitizer an unoptimized build checks
        // every element access, and this test must not starve the suite's timed tests.
        for step in 0..<500 {
            let which = random.next(arrays.count)
            var array = arrays[which], model = models[which]
            let value = UInt64(step) << 20 | UInt64(random.next(1 << 20))
            // Past five pages, mostly shrink.
            let operation = model.count > 5 * page && random.next(2) == 0 ? 3 : random.next(10)
            switch operation {
            case 0 where arrays.count < 6:
                // A copy: both go on, sharing pages until one writes.
                arrays.append(array)
                models.append(model)
            case 1:
                let added = [1, 7, page - 3, page + 5, 2 * page][random.next(5)]
                array.append(repeating: value, count: added)
                model.append(contentsOf: repeatElement(value, count: added))
            case 2:
                // Appended unwritten, then filled through a disjoint writer in two parts, the
                // second first (as a load's jobs write their chunks in any order).
                let added = random.next(page + 9)
                let values = (0..<added).map { value &+ UInt64($0) }
                let start = array.count, split = random.next(added + 1)
                array.appendUnwritten(added)
                let writer = array.disjointWriter()
                values.withUnsafeBytes { bytes in
                    writer.write(bytes: UnsafeRawBufferPointer(rebasing: bytes[(split * 8)...]), at: start + split)
                    writer.write(bytes: UnsafeRawBufferPointer(rebasing: bytes[..<(split * 8)]), at: start)
                }
                model.append(contentsOf: values)
            case 3 where !model.isEmpty:
                let removed = random.next(Swift.min(model.count, 2 * page) + 1)
                array.removeLast(removed)
                model.removeLast(removed)
            case 4 where !model.isEmpty:
                // Bulk writes to scattered elements, their pages made the array's own first.
                let indices = (0..<1 + random.next(50)).map { _ in random.next(model.count) }.sorted()
                array.makeOwn(pagesCovering: indices)
                for index in indices {
                    array.setInOwnPage(value, at: index)
                    model[index] = value
                }
            case 5 where !model.isEmpty:
                // A run rewritten in place, a page's part at a time: through a disjoint writer
                // (every page made this array's own first), or through `update` (each page it
                // writes made its own), so the copies sharing them are untouched either way.
                let start = random.next(model.count), end = start + random.next(model.count - start + 1)
                if random.next(2) == 0 {
                    array.disjointWriter().update(start..<end) { part in
                        for index in part.indices { part[index] &+= 1 }
                    }
                    for index in start..<end { model[index] &+= 1 }
                } else {
                    // Each element set from its distance to the run's start.
                    array.update(start..<end) { part, from in
                        for index in part.indices { part[index] = value &+ UInt64(from + index) }
                    }
                    for index in start..<end { model[index] = value &+ UInt64(index - start) }
                }
            case 6:
                array.reserveCapacity(model.count + random.next(2 * page))
            case 7 where random.next(20) == 0:
                array.removeAll()
                model.removeAll()
            case 8 where random.next(3) == 0:
                // Made anew by repeating one value: its full pages are one page, shared.
                let count = [3, page + 1, 3 * page, 4 * page + 7][random.next(4)]
                array = PagedArray(repeating: value, count: count)
                model = Array(repeating: value, count: count)
            default:
                if !model.isEmpty, random.next(2) == 0 {
                    let index = random.next(model.count)
                    array[index] = value
                    model[index] = value
                } else {
                    array.append(value)
                    model.append(value)
                }
            }
            arrays[which] = array
            models[which] = model
            largest = Swift.max(largest, model.count)
            // The array written every few steps; all of them (a write leaking into a copy) every 25.
            guard step % 5 == 4 else { continue }
            for index in step % 25 == 24 ? Array(arrays.indices) : [which] {
                guard equal(arrays[index], models[index]) else {
                    Issue.record("seed \(seed): array \(index) differs from its model after step \(step)")
                    return
                }
            }
        }
        #expect(largest > 2 * page, "seed \(seed): the arrays should span several pages")
        #expect(arrays.count > 1, "seed \(seed): copies should have been made")
    }

    private func equal(_ array: PagedArray<UInt64>, _ model: [UInt64]) -> Bool {
        guard array.count == model.count else { return false }
        var offset = 0, same = true
        array.forEachPart { part in
            same = same && part.elementsEqual(model[offset..<offset + part.count])
            offset += part.count
        }
        return same
    }

    @Test func partsCoverTheElementsInOrder() {
        var array = PagedArray<UInt32>()
        let count = 3 * PagedArray<UInt32>.pageCapacity + 17
        for value in 0..<UInt32(count) { array.append(value) }
        var joined: [UInt32] = []
        array.forEachPart { joined.append(contentsOf: $0) }
        #expect(joined == Array(0..<UInt32(count)))
    }

    /// A repeated value's full pages are one page until written: a write copies the page it
    /// writes, and the other places of that page keep the value.
    @Test func aRepeatedValueIsOnePageUntilWritten() {
        let page = PagedArray<UInt64>.pageCapacity
        var array = PagedArray<UInt64>(repeating: 7, count: 3 * page + 5)
        #expect(array.count == 3 * page + 5 && array.allSatisfy { $0 == 7 })
        #expect(array.pageIdentities.prefix(3).allSatisfy { $0 == array.pageIdentities[0] }, "the full pages are one")
        #expect(array.pageIdentities[3] != array.pageIdentities[0], "the partial last page is its own")
        array[page + 1] = 8
        array.append(9)
        #expect(array[page + 1] == 8 && array[1] == 7 && array[2 * page + 1] == 7 && array.last == 9)
        let pages = array.pageIdentities
        #expect(pages[1] != pages[0] && pages[2] == pages[0], "only the page written was copied")
    }

    @Test func aCopyThatWritesOnePageSharesTheOthers() {
        let page = PagedArray<UInt64>.pageCapacity
        var original = PagedArray<UInt64>(repeating: 1, count: 4 * page)
        var copy = original
        copy[2 * page] = 2
        copy.append(3)
        original[0] = 4
        #expect(original[2 * page] == 1 && original.count == 4 * page && original[0] == 4)
        #expect(copy[2 * page] == 2 && copy.last == 3 && copy[0] == 1)
        // Only the pages each wrote were copied.
        #expect(copy.sharesPage(1, with: original) && copy.sharesPage(2, with: original) == false)
        #expect(copy.sharesPage(0, with: original) == false && copy.sharesPage(3, with: original))
        #expect(copy.sharesPage(4, with: original) == false, "the copy's appended page is its own")
    }
}
