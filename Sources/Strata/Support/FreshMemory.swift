#if canImport(Glibc)
import Glibc
#endif

/// Faulting in fresh memory ahead of writing it, behind one checked call.
///
/// A warm start writes megabytes of fresh memory (a chunk's arena bytes, decompressed straight
/// into place); written page by page, each page faults on its first write, a trap per page
/// taken by threads that are decompressing at the same time. `MADV_POPULATE_WRITE` (Linux
/// 5.14+) faults a range in with one call and no trap per page.
enum FreshMemory {
    /// Asks the kernel to fault in the whole pages of `buffer` writable, as if each were written.
    /// Contents are unchanged: a page already present (written by another thread, or memory
    /// reused from an earlier allocation) is left as it is. Returns whether the kernel did; where
    /// it cannot (an older kernel, another system), the pages fault in as they are written.
    @discardableResult
    static func populate(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        #if os(Linux)
        guard let base = buffer.baseAddress, buffer.count > 0 else { return true }
        let page = UInt(pageSize)
        let start = UInt(bitPattern: base) & ~(page - 1)
        let end = UInt(bitPattern: base + buffer.count)
        guard let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return false }
        return madvise(aligned, Int(end - start), populateWrite) == 0
        #else
        return false
        #endif
    }

    /// Asks the kernel to back the whole 2 MiB-aligned huge pages inside `buffer` with huge
    /// pages where it can (`MADV_HUGEPAGE`: transparent huge pages, in the kernel's `madvise`
    /// mode as in `always`): one fault — or one ``populate(_:)`` step — then maps 512 pages'
    /// worth, zeroed in one go, instead of taking 512 faults. Contents are unchanged. Returns
    /// whether the kernel took the advice (false where it cannot: no such range in `buffer`,
    /// huge pages disabled, another system); the memory then stays in ordinary pages.
    @discardableResult
    static func preferHugePages(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
        #if os(Linux)
        guard let base = buffer.baseAddress else { return false }
        let huge = UInt(hugePageSize)
        let start = (UInt(bitPattern: base) + huge - 1) & ~(huge - 1)
        let end = UInt(bitPattern: base + buffer.count) & ~(huge - 1)
        guard end > start, let aligned = UnsafeMutableRawPointer(bitPattern: start) else { return false }
        return madvise(aligned, Int(end - start), hugePage) == 0
        #else
        return false
        #endif
    }

    /// An array of `count` elements that `initialize` writes, its pages faulted in with one
    /// ``populate(_:)`` first when it spans more than a few: a warm start's indexes allocate
    /// arrays of an element per object, and written page by page each page faults on its first
    /// write. `initialize` is given the array's storage, uninitialized, and must initialize
    /// every element.
    static func array<T: BitwiseCopyable>(count: Int, _ initialize: (UnsafeMutableBufferPointer<T>) -> Void) -> [T] {
        Array(unsafeUninitializedCapacity: count) { buffer, initialized in
            if count * MemoryLayout<T>.stride >= populateThreshold { populate(UnsafeMutableRawBufferPointer(buffer)) }
            initialize(UnsafeMutableBufferPointer(rebasing: buffer[0..<count]))
            initialized = count
        }
    }

    /// An array of `count` copies of `value`: ``array(count:_:)``.
    static func array<T: BitwiseCopyable>(repeating value: T, count: Int) -> [T] {
        array(count: count) { $0.initialize(repeating: value) }
    }

    /// The size from which ``array(count:_:)`` populates: 16 pages. Below, a few faults cost
    /// less than the call.
    static let populateThreshold = 64 << 10

    /// The size of a transparent huge page (2 MiB on x86-64 and on arm64 with 4 KiB pages).
    static let hugePageSize = 2 << 20

    #if os(Linux)
    /// `MADV_POPULATE_WRITE` (linux/mman.h), which Glibc's Swift overlay may not import.
    private static let populateWrite: Int32 = 23
    /// `MADV_HUGEPAGE` (linux/mman.h).
    private static let hugePage: Int32 = 14
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    #endif
}
