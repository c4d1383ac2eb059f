#if os(Linux)
import Foundation
import Glibc
@testable import Strata
import Testing

/// Three columns of integers, for a block a load fills.
private struct Tally: Entity {
    var id: Int64
    var seen: Int64
    var kept: Int64
}

/// `FreshMemory.populate` faults a range's whole pages in and changes no byte: a load calls it
/// on arena space another thread may be writing next to. `preferHugePages` advises only the
/// whole huge pages inside a range, changes no byte, and — where the kernel's transparent huge
/// pages are not off — makes a populated range huge pages; a block a load fills gets its
/// columns' pages that way.
@Suite struct FreshMemoryTests {
    private let page = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// Which of `count` pages from `base` are resident.
    private func resident(_ base: UnsafeMutableRawPointer, pages count: Int) -> [Bool] {
        var vector = [UInt8](repeating: 0, count: count)
        #expect(mincore(base, count * page, &vector) == 0)
        return vector.map { $0 & 1 == 1 }
    }

    @Test func populatingFaultsInWholePagesAndKeepsTheirBytes() throws {
        let pages = 16
        let mapped = mmap(nil, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        let base = try #require(mapped == MAP_FAILED ? nil : mapped)
        defer { munmap(base, pages * page) }
        // One page written before: its bytes must stay.
        (base + 3 * page).initializeMemory(as: UInt8.self, repeating: 0xAB, count: page)
        #expect(resident(base, pages: pages).filter { $0 }.count == 1, "only the written page is resident yet")

        // A range from the middle of page 2 to the middle of page 9: pages 2 to 9, whole.
        let range = UnsafeMutableRawBufferPointer(start: base + 2 * page + 100, count: 7 * page)
        #expect(FreshMemory.populate(range))
        #expect(resident(base, pages: pages) == (0..<pages).map { (2...9).contains($0) })
        let bytes = UnsafeRawBufferPointer(start: base, count: pages * page)
        #expect(bytes[(3 * page)..<(4 * page)].allSatisfy { $0 == 0xAB }, "a present page keeps its bytes")
        #expect(bytes[(2 * page)..<(3 * page)].allSatisfy { $0 == 0 } && bytes[(9 * page)..<(10 * page)].allSatisfy { $0 == 0 })
        #expect(FreshMemory.populate(UnsafeMutableRawBufferPointer(start: nil, count: 0)), "nothing to populate")
    }

    /// `FreshMemory.array` hands its initializer exactly the array's storage, whose pages are
    /// already resident when the array spans the threshold (a fresh allocation that size is a
    /// mapping of its own, not yet touched), and the array holds what was written.
    @Test func arraysAreMadeWithTheirPagesFaultedInFirst() throws {
        for count in [0, 1, 1_000, FreshMemory.populateThreshold / 8, 300_000] {
            var residentBeforeWriting: [Bool] = []
            let made: [Int] = FreshMemory.array(count: count) { buffer in
                #expect(buffer.count == count)
                if count * 8 >= FreshMemory.populateThreshold, let base = buffer.baseAddress {
                    // The whole pages inside the storage, before anything is written to them.
                    let first = (UInt(bitPattern: base) + UInt(page) - 1) & ~UInt(page - 1)
                    let end = UInt(bitPattern: base + count) & ~UInt(page - 1)
                    if end > first, let start = UnsafeMutableRawPointer(bitPattern: first) {
                        residentBeforeWriting = resident(start, pages: Int(end - first) / page)
                    }
                }
                for index in 0..<count { (buffer.baseAddress! + index).initialize(to: index * 3) }
            }
            #expect(made == (0..<count).map { $0 * 3 }, "\(count) elements")
            if count * 8 >= FreshMemory.populateThreshold {
                #expect(!residentBeforeWriting.isEmpty && residentBeforeWriting.allSatisfy { $0 },
                        "\(count) elements: a page of the storage was not faulted in before the initializer ran")
            }
        }
        #expect(FreshMemory.array(repeating: UInt64(7), count: 40_000) == Array(repeating: 7, count: 40_000))
    }

    /// The `AnonHugePages` of the mapping that holds `address`, in KiB (`/proc/self/smaps`).
    private func anonymousHugePages(at address: UnsafeMutableRawPointer) throws -> Int {
        // Read to the end (a /proc file reports no size, so a read sized by it reads nothing).
        let smaps = String(decoding: try #require(FileHandle(forReadingAtPath: "/proc/self/smaps")).readDataToEndOfFile(),
                           as: UTF8.self)
        let target = UInt(bitPattern: address)
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inside = bounds.count == 2 && bounds[0] <= target && target < bounds[1]
            } else if inside, fields.first == "AnonHugePages:", fields.count > 1 {
                return Int(fields[1]) ?? -1
            }
        }
        return -1
    }

    @Test func hugePagesAreAdvisedOnlyWhereWholeOnesFitAndKeepTheBytes() throws {
        let huge = FreshMemory.hugePageSize
        #expect(!FreshMemory.preferHugePages(UnsafeMutableRawBufferPointer(start: nil, count: 0)))
        // Four huge pages' worth, mapped with room to align: [aligned + 100, aligned + 3 huge + 100)
        // holds exactly two whole huge pages.
        let size = 6 * huge
        let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        let base = try #require(mapped == MAP_FAILED ? nil : mapped)
        defer { munmap(base, size) }
        let aligned = try #require(UnsafeMutableRawPointer(bitPattern: (UInt(bitPattern: base) + UInt(huge) - 1) & ~UInt(huge - 1)))
        // Less than a whole aligned huge page: nothing to advise.
        #expect(!FreshMemory.preferHugePages(UnsafeMutableRawBufferPointer(start: aligned + 100, count: huge)))
        // A page written before: its bytes must stay.
        (aligned + huge + 4096).initializeMemory(as: UInt8.self, repeating: 0xCD, count: 4096)
        let range = UnsafeMutableRawBufferPointer(start: aligned + 100, count: 3 * huge)
        #expect(FreshMemory.preferHugePages(range))
        #expect(FreshMemory.populate(range))
        let bytes = UnsafeRawBufferPointer(start: aligned, count: 4 * huge)
        #expect(bytes[(huge + 4096)..<(huge + 8192)].allSatisfy { $0 == 0xCD }, "a written page keeps its bytes")
        #expect(bytes[huge..<(huge + 4096)].allSatisfy { $0 == 0 })
        let mode = (try? String(contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8)) ?? ""
        let hugeKiB = try anonymousHugePages(at: aligned + huge)
        print("transparent huge pages: \(mode.trimmingCharacters(in: .whitespacesAndNewlines)); AnonHugePages of the range's mapping: \(hugeKiB) KiB")
        // With huge pages not off, the kernel may still find no free huge page; it found them
        // every time here, and a machine without them shows it in the line above.
        #expect(mode.contains("[never]") || mode.isEmpty || hugeKiB >= huge / 1024,
                "the advised, populated range is not in huge pages")
    }

    /// A block a load fills with 60,000 rows (2.4 MB of cells) carves every column's new pages
    /// from one allocation (`SlabMemory`, advised into huge pages): the pages after each array's
    /// first — every column's tags, payloads and lengths — lie one after the other, each where
    /// the previous end (no allocation's header between them), and the cells written through the
    /// writers read back.
    @Test func aLoadedBlocksColumnsAreCarvedFromOneAllocation() throws {
        let schema = try SchemaRegistry([Tally.self]).schema(for: Tally.self)
        let rows = 60_000
        var block = ColumnBlock(schema: schema)
        block.appendUnwritten(rows: rows, arenaBytes: 0) { writers, _ in
            let tags = [UInt8](repeating: CellTag.integer, count: rows)
            for (attribute, writer) in writers.enumerated() {
                let numbers = (0..<rows).map { Int64($0 * 3 + attribute) }
                tags.withUnsafeBytes { tags in
                    numbers.withUnsafeBytes { numbers in
                        writer.write(tags: tags, numbers: numbers, lengths: UnsafeRawBufferPointer(start: nil, count: 0),
                                     at: 0, bytesFrom: 0)
                    }
                }
            }
        }
        for row in [0, 4_095, 4_096, 33_333, rows - 1] {
            #expect((0..<3).map { block.value(at: row, $0) } == (0..<3).map { .integer(Int64(row * 3 + $0)) })
        }
        // Where each array's second page starts: its first is made on its own, with room for
        // the first rows; the pages after it come from the slab.
        func start<T>(_ array: PagedArray<T>) -> UInt {
            var parts: [UInt] = []
            array.forEachPart { part in parts.append(UInt(bitPattern: part.baseAddress)) }
            return parts.count > 1 ? parts[1] : 0
        }
        let pages = (rows + PagedArray<UInt8>.pageCapacity - 1) / PagedArray<UInt8>.pageCapacity - 1
        var expected = start(block.columns[0].tags)
        for column in block.columns {
            for (part, stride) in [(start(column.tags), 1), (start(column.payloads), 8), (start(column.lengths), 4)] {
                expected = (expected + UInt(stride) - 1) & ~UInt(stride - 1)
                #expect(part == expected, "a column's part is not where the previous one ends")
                expected = part + UInt(pages * PagedArray<UInt8>.pageCapacity * stride)
            }
        }
    }
}
#endif
