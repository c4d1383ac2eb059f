#if os(Linux)
import Glibc
@testable import Strata
import Testing

/// `FreshMemory.populate` faults a range's whole pages in and changes no byte: a load calls it
/// on arena space another thread may be writing next to.
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
}
#endif
