import Foundation

/// Where a column's text and blob bytes are read, as a cell's payload points at them: a block's
/// one contiguous arena (`[UInt8]`, or its bytes borrowed, the payload an offset), or a table's
/// pages (``PagedArena``).
protocol CellBytes {
    /// Calls `body` with the `count` bytes a text or blob cell holding `payload` points at.
    func withCellBytes<R>(_ payload: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

/// A ``CellBytes`` that cells are written to.
protocol CellArena: CellBytes {
    /// Appends `bytes` and returns the payload a cell holding them carries.
    mutating func appendCell(_ bytes: UnsafeRawBufferPointer) -> UInt64
}

extension UnsafeRawBufferPointer: CellBytes {
    func withCellBytes<R>(_ payload: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let start = Int(truncatingIfNeeded: payload)
        return try body(UnsafeRawBufferPointer(rebasing: self[start..<start + count]))
    }
}

extension Array: CellBytes, CellArena where Element == UInt8 {
    func withCellBytes<R>(_ payload: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let start = Int(truncatingIfNeeded: payload)
        return try withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<start + count])) }
    }

    mutating func appendCell(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let offset = UInt64(count)
        append(contentsOf: bytes)
        return offset
    }
}

/// The text and blob bytes of a ``ColumnTable``, in pages: a cell's payload is its
/// ``ArenaAddress``.
///
/// Copies of a table share their pages, and bytes are only ever appended, to the last page while
/// it has room and is this arena's alone, else to a new one: a copy that writes copies no byte
/// it shares. So a merge prepared off the main actor on a copy of a table (``ObjectGraph``)
/// writes only its new text, to a page of its own, never a copy of the bytes the table holds
/// (the shared page's free room is left unused: memory never touched, so never resident). A
/// value larger than a page gets a page of its own; a block's arena, adopted whole, becomes the
/// first page as it is.
///
/// Pages other than an adopted one are raw memory (``ArenaPage``), so an append is a check that
/// the last page is this arena's own and has room, and one copy of the bytes, not a growing
/// `[UInt8]`'s generic `append(contentsOf:)` per text cell.
struct PagedArena: CellArena, Sendable {
    /// The room a new page is made with.
    static let pageSize = 1 << 20

    /// A block's arena, adopted as it is: page 0 when not empty, or when deferred pages follow.
    private var adopted: [UInt8] = []
    /// The other pages, numbered after the adopted one; the last is the one appended to.
    private var pages: [ArenaPage] = []
    /// The bytes held, in every page.
    private(set) var count = 0
    /// The number of the first page of ``pages``: 1 after an adopted page, else 0.
    private var firstRawPage = 0

    init() {}

    /// An arena whose first page is `bytes` (a block's arena: its cells' offsets are their
    /// payloads as they are) and whose next pages are `deferred`, numbered from 1 (a loaded
    /// block's deferred pages: ``ColumnBlock/deferred``), or nil when `bytes` is too large for
    /// one page (4 GiB).
    init?(adopting bytes: [UInt8], deferred: [ArenaPage] = []) {
        guard bytes.count <= Int(UInt32.max) else { return nil }
        adopted = bytes
        pages = deferred
        count = bytes.count + deferred.reduce(0) { $0 + $1.used }
        firstRawPage = bytes.isEmpty && deferred.isEmpty ? 0 : 1
    }

    /// How many of the arena's deferred pages (``ArenaPage/init(deferred:filledBy:)``) have been
    /// filled, of how many.
    var deferredPages: (filled: Int, total: Int) {
        let deferred = pages.compactMap(\.deferred)
        return (deferred.filter(\.filled).count, deferred.count)
    }

    /// The bytes each page holds, in page order.
    var pageSizes: [Int] { (firstRawPage == 0 ? [] : [adopted.count]) + pages.map(\.used) }

    func withCellBytes<R>(_ payload: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Self.withCellBytes(payload, count: count, adopted, pages, firstRawPage, filled: nil, body)
    }

    /// The arena's pages, read without a deferred page's fill check at every read: for reads in
    /// a hot loop (``RowOrder``'s comparisons). With `deferred`, every deferred page is filled
    /// first and may then be read; without, reading one traps.
    ///
    /// Why: a read through the arena itself may run a deferred page's fill (an opaque call) and
    /// checks an atomic flag, and around both the compiler retains the columns and pages at
    /// every comparison of two text keys: a retain and a release per comparison in a sort.
    func filled(deferred: Bool) -> Filled {
        if deferred { for page in pages { page.fill() } }
        return Filled(adopted: adopted, pages: pages, firstRawPage: firstRawPage, readsDeferred: deferred)
    }

    /// ``PagedArena/filled(deferred:)``: an arena's pages, read without filling any.
    struct Filled: CellBytes {
        fileprivate let adopted: [UInt8]
        fileprivate let pages: [ArenaPage]
        fileprivate let firstRawPage: Int
        /// Whether every deferred page was filled when this was made, so that they may be read.
        fileprivate let readsDeferred: Bool

        func withCellBytes<R>(_ payload: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try PagedArena.withCellBytes(payload, count: count, adopted, pages, firstRawPage, filled: readsDeferred, body)
        }
    }

    /// The bytes a cell holding `payload` points at, in `adopted` or `pages`. A deferred page is
    /// filled first when `filled` is nil, else read as it is, which only `filled == true` allows
    /// (``ArenaPage/filledBytes(_:_:deferredFilled:)``).
    @inline(__always)
    private static func withCellBytes<R>(_ payload: UInt64, count: Int, _ adopted: [UInt8], _ pages: [ArenaPage],
                                         _ firstRawPage: Int, filled: Bool?,
                                         _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard count > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        let address = ArenaAddress(payload: payload)
        let start = address.offset, page = address.page - firstRawPage
        guard page < 0 else {
            guard let filled else { return try body(pages[page].bytes(start, count)) }
            return try body(pages[page].filledBytes(start, count, deferredFilled: filled))
        }
        return try adopted.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<start + count])) }
    }

    mutating func appendCell(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        precondition(bytes.count <= Int(UInt32.max), "a value has \(bytes.count) bytes; a cell holds at most 4 GiB")
        var last = pages.count - 1
        // A new page when there is none, when the last one is shared with a copy of the arena
        // (left as it is: the copy may be reading it), or when it lacks room.
        if last < 0 || !isKnownUniquelyReferenced(&pages[last]) || pages[last].room < bytes.count {
            pages.append(ArenaPage(capacity: Swift.max(Self.pageSize, bytes.count)))
            last += 1
        }
        count += bytes.count
        return ArenaAddress(page: firstRawPage + last, offset: pages[last].append(source, count: bytes.count)).payload
    }

    /// The most bytes a page ``take(_:)`` takes is copied with; a larger one is taken as it is.
    static let copiedPageLimit = 64 * 1024

    /// Takes the bytes of `page`, a filled page made elsewhere (``CellRows``: a change set's
    /// text), and returns the base that turns an offset into `page` into the payload of a cell
    /// of this arena holding the same bytes (`base + offset`). A page larger than
    /// ``copiedPageLimit`` becomes one of this arena's pages as it is: nothing copied, and never
    /// written (its maker shares it); a smaller one is copied after this arena's own bytes, so
    /// that many small change sets do not leave as many small pages.
    mutating func take(_ page: ArenaPage) -> UInt64 {
        let size = page.used
        // Copied as one cell's bytes would be: its payload is the base of the offsets in it.
        guard size > Self.copiedPageLimit else { return appendCell(page.bytes(0, size)) }
        count += size
        pages.append(page)
        return ArenaAddress(page: firstRawPage + pages.count - 1).payload
    }
}

/// A page of a ``PagedArena``: raw memory, the first `used` bytes of it written.
///
/// A deferred page (``init(deferred:filledBy:)``) is full from the start and is written once,
/// by its ``DeferredBytes`` fill, on the first read of any of its bytes.
///
/// `@unchecked Sendable`, and safe: its memory and `used` are written only by ``append(_:count:)``,
/// which a `PagedArena` calls only on its last page and only after `isKnownUniquelyReferenced`
/// proved the arena holds the page's only reference (or made it just now), and which a
/// ``CellRows`` calls only on the page it is making, before the initializer returns and anything
/// else can hold it (its property is a `let`, never written again); a page two holders
/// share — in any isolation — is only read, and a reader's reference keeps it alive. A deferred
/// page is never appended to (it has no room), and its memory is written only by its fill,
/// which ``bytes(_:_:)`` runs to completion — once, under ``DeferredBytes``' lock — before it
/// hands out any of it. So nothing in it is written while another thread can read it.
final class ArenaPage: @unchecked Sendable {
    private let start: UnsafeMutableRawPointer
    private let capacity: Int
    /// The bytes written.
    private(set) var used = 0
    /// For a deferred page, what fills it on first read.
    let deferred: DeferredBytes?

    init(capacity: Int) {
        self.capacity = capacity
        start = .allocate(byteCount: capacity, alignment: 1)
        deferred = nil
    }

    /// A page of `size` bytes, all in use, written by `fill` on the first read of any of them:
    /// until then its memory is reserved, not touched.
    init(deferred size: Int, filledBy fill: DeferredBytes) {
        capacity = size
        used = size
        start = .allocate(byteCount: Swift.max(size, 1), alignment: 1)
        deferred = fill
    }

    deinit { start.deallocate() }

    /// The bytes still free.
    var room: Int { capacity - used }

    /// Fills a deferred page now, as the first read of its bytes would; nothing for another page.
    func fill() {
        if let deferred { deferred.fillOnce(UnsafeMutableRawBufferPointer(start: start, count: capacity)) }
    }

    /// The `count` bytes from `offset` (a deferred page's filled first).
    func bytes(_ offset: Int, _ count: Int) -> UnsafeRawBufferPointer {
        precondition(offset >= 0 && count <= used - offset, "bytes \(offset)..<\(offset + count) of an arena page of \(used)")
        fill()
        return UnsafeRawBufferPointer(start: start + offset, count: count)
    }

    /// The `count` bytes from `offset`, read as they are: a page that is not deferred, or one
    /// whose reader filled it first (`deferredFilled`: ``PagedArena/filled(deferred:)``, on the
    /// reader's thread, so the fill's writes happen before these reads). Reading a deferred page
    /// otherwise traps: never a read of bytes not yet written. No atomic is read here (what
    /// keeps ``RowOrder``'s comparisons free of retains).
    func filledBytes(_ offset: Int, _ count: Int, deferredFilled: Bool) -> UnsafeRawBufferPointer {
        precondition(offset >= 0 && count <= used - offset, "bytes \(offset)..<\(offset + count) of an arena page of \(used)")
        precondition(deferredFilled || deferred == nil, "a deferred arena page read without its fill")
        return UnsafeRawBufferPointer(start: start + offset, count: count)
    }

    /// Copies `count` bytes from `source` after the written ones and returns where they start.
    /// - Precondition: the caller holds the only reference, and there is room.
    func append(_ source: UnsafeRawPointer, count: Int) -> Int {
        precondition(count <= room, "\(count) bytes appended to an arena page with room for \(room)")
        let offset = used
        (start + offset).copyMemory(from: source, byteCount: count)
        used = offset + count
        return offset
    }
}
