/// `PagedArray`'s page geometry: 4,096 elements a page. (Global: a generic type has no stored
/// static properties.)
let pagedArrayPageShift = 12
let pagedArrayPageCapacity = 1 << pagedArrayPageShift
let pagedArrayOffsetMask = pagedArrayPageCapacity - 1

/// A growable array of plain data in fixed-size pages that copies share: a copy that writes
/// copies only the pages it writes, not the whole array.
///
/// What a ``ColumnTable``'s columns and per-slot bookkeeping are made of. A merge prepared off
/// the main actor writes a copy of the main context's table while the main actor keeps reading
/// the original; with one contiguous array per column, the copy's first write to each column
/// would copy it whole, every merge, into fresh memory that then faults in. With pages, a merge
/// that appends rows copies the few pages it appends to, and one that updates scattered rows
/// copies the pages those rows are in.
///
/// Elements are `BitwiseCopyable` (tags, payloads, flags, counters): pages are raw memory that is
/// copied with `memcpy` and freed without deinitializing anything. Every page holds
/// ``pageCapacity`` elements except a lone first page, which grows by doubling until it is full
/// (so a table of five rows does not take 50 KB per column). Element `i` is at offset
/// `i & pagedArrayOffsetMask` of page `i >> pagedArrayPageShift`.
///
/// Writes go through ``subscript(_:)`` (copying the page first when another array shares it),
/// or in bulk: ``makeOwn(pagesCovering:)`` once, then ``setInOwnPage(_:at:)`` per element with no
/// check per element; or, from several threads at once, through a ``DisjointWriter``.
struct PagedArray<Element: BitwiseCopyable>: RandomAccessCollection, MutableCollection, Sendable {
    /// The elements a full page holds.
    static var pageCapacity: Int { pagedArrayPageCapacity }

    private var pages: [PagedArrayPage] = []
    /// The number of elements.
    private(set) var count = 0

    init() {}

    /// `count` copies of `element`. The full pages are one page, shared: a table adopting a
    /// warm start's rows sets its arrays of per-row bookkeeping this way on the main actor, which
    /// then writes one page of fresh memory per array, not one per 4,096 rows. A shared page is
    /// copied when first written, as any page a copy shares is.
    init(repeating element: Element, count: Int) {
        let full = count >> pagedArrayPageShift
        guard full > 1 else {
            append(repeating: element, count: count)
            return
        }
        let page = PagedArrayPage(capacity: pagedArrayPageCapacity, stride: MemoryLayout<Element>.stride,
                                  alignment: MemoryLayout<Element>.alignment)
        page.bytes.initializeMemory(as: Element.self, repeating: element, count: pagedArrayPageCapacity)
        pages = Array(repeating: page, count: full)
        self.count = full << pagedArrayPageShift
        append(repeating: element, count: count - self.count)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(index: Int) -> Element {
        get {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "index \(index) out of \(count) elements")
            return Self.elements(pages[index >> pagedArrayPageShift])[index & pagedArrayOffsetMask]
        }
        set {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "index \(index) out of \(count) elements")
            let page = index >> pagedArrayPageShift
            makeOwn(page)
            Self.elements(pages[page])[index & pagedArrayOffsetMask] = newValue
        }
    }

    // MARK: Growing and shrinking

    @inline(__always)
    mutating func append(_ element: Element) {
        let offset = count & pagedArrayOffsetMask
        let page = count >> pagedArrayPageShift
        // The common case, kept small enough to inline: room in a page this array owns.
        if page < pages.count, offset < pages[page].capacity, isKnownUniquelyReferenced(&pages[page]) {
            Self.elements(pages[page])[offset] = element
            count += 1
        } else {
            appendToNewOrSharedPage(element)
        }
    }

    /// ``append(_:)`` when the element starts a page, the lone first page is full, or the page
    /// is shared.
    @inline(never)
    private mutating func appendToNewOrSharedPage(_ element: Element) {
        let offset = count & pagedArrayOffsetMask
        let page = count >> pagedArrayPageShift
        if page == pages.count {
            addPage(capacity: pages.isEmpty ? 8 : pagedArrayPageCapacity)
        } else {
            makeOwn(page)
            if offset == pages[page].capacity { growFirstPage(toHold: offset + 1) }
        }
        Self.elements(pages[page])[offset] = element
        count += 1
    }

    /// Appends `count` copies of `element`.
    mutating func append(repeating element: Element, count added: Int) {
        appendSpace(added) { $0.initialize(repeating: element) }
    }

    /// Appends `elements`, a page's part at a time.
    mutating func append(contentsOf elements: [Element]) {
        elements.withUnsafeBufferPointer { append(contentsOf: $0) }
    }

    /// Appends the elements `source` points at, a page's part at a time.
    mutating func append(contentsOf source: UnsafeBufferPointer<Element>) {
        append(count: source.count) { part, before in
            part.baseAddress!.initialize(from: source.baseAddress! + before, count: part.count)
        }
    }

    /// Appends `added` elements that `fill` writes: it is called with each page's part of the
    /// new space, in order (raw memory it must initialize), and the number of new elements
    /// before that part.
    mutating func append(count added: Int, filledBy fill: (UnsafeMutableBufferPointer<Element>, Int) -> Void) {
        var before = 0
        appendSpace(added) { part in
            fill(part, before)
            before += part.count
        }
    }

    /// Removes the last `count` elements.
    mutating func removeLast(_ removed: Int) {
        precondition(removed >= 0 && removed <= count, "removing \(removed) of \(count) elements")
        count -= removed
        let needed = (count + pagedArrayPageCapacity - 1) >> pagedArrayPageShift
        if pages.count > needed {
            pages.removeLast(pages.count - needed)
        }
    }

    mutating func removeAll() {
        pages = []
        count = 0
    }

    /// Makes room for `capacity` elements without growing the first page again (the only page
    /// that ever grows in place); later pages are made as they are reached.
    mutating func reserveCapacity(_ capacity: Int) {
        guard capacity > 0 else { return }
        if capacity > count {
            pages.reserveCapacity((capacity + pagedArrayPageCapacity - 1) >> pagedArrayPageShift)
        }
        if pages.isEmpty {
            addPage(capacity: Swift.min(capacity, pagedArrayPageCapacity))
        } else if pages.count == 1, pages[0].capacity < Swift.min(capacity, pagedArrayPageCapacity) {
            growFirstPage(toHold: capacity)
        }
    }

    // MARK: Bulk access

    /// Makes the pages that hold the elements at `indices` this array's own (copying each that
    /// another array shares), so that ``setInOwnPage(_:at:)`` may write them.
    mutating func makeOwn(pagesCovering indices: some Sequence<Int>) {
        var last = -1
        for index in indices {
            let page = index >> pagedArrayPageShift
            if page != last { makeOwn(page) }
            last = page
        }
    }

    /// Writes `element` at `index`, whose page ``makeOwn(pagesCovering:)`` made this array's own
    /// since the array was last copied: no check that the page is not shared.
    mutating func setInOwnPage(_ element: Element, at index: Int) {
        precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "index \(index) out of \(count) elements")
        let page = index >> pagedArrayPageShift
        assert(isKnownUniquelyReferenced(&pages[page]), "a shared page written")
        Self.elements(pages[page])[index & pagedArrayOffsetMask] = element
    }

    /// Calls `body` with each page's part of the elements in `range`, in order, and the part's
    /// distance from the start of `range`: each page made this array's own first (copied when
    /// another array shares it), so `body` may write the part. How a run of elements is written
    /// with one check per page instead of one per element.
    mutating func update(_ range: Range<Int>, _ body: (UnsafeMutableBufferPointer<Element>, Int) -> Void) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "elements \(range) of \(count)")
        var index = range.lowerBound
        while index < range.upperBound {
            let page = index >> pagedArrayPageShift, offset = index & pagedArrayOffsetMask
            let length = Swift.min(range.upperBound - index, pagedArrayPageCapacity - offset)
            makeOwn(page)
            body(UnsafeMutableBufferPointer(start: Self.elements(pages[page]) + offset, count: length), index - range.lowerBound)
            index += length
        }
    }

    /// Calls `body` with the elements in order, a page's worth at a time.
    func forEachPart(_ body: (UnsafeBufferPointer<Element>) -> Void) {
        var index = 0
        for page in pages where index < count {
            let length = Swift.min(count - index, pagedArrayPageCapacity)
            body(UnsafeBufferPointer(start: Self.elements(page), count: length))
            index += length
        }
    }

    /// Calls `body` with the elements from `index` up to `end` (exclusive), which lie in one page
    /// (`end` at most that page's end): one check for a run of elements read together, where
    /// ``subscript(_:)`` checks each.
    func withPart<R>(from index: Int, upTo end: Int, _ body: (UnsafeBufferPointer<Element>) throws -> R) rethrows -> R {
        precondition(index >= 0 && index <= end && end <= count, "elements \(index)..<\(end) of \(count)")
        precondition(end - index <= pagedArrayPageCapacity - (index & pagedArrayOffsetMask), "elements \(index)..<\(end) span pages")
        guard index < end else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        let page = pages[index >> pagedArrayPageShift]
        return try withExtendedLifetime(page) {
            try body(UnsafeBufferPointer(start: Self.elements(page) + (index & pagedArrayOffsetMask), count: end - index))
        }
    }

    /// Each page's identity, in order: for tests of which pages are shared.
    var pageIdentities: [ObjectIdentifier] { pages.map(ObjectIdentifier.init) }

    /// Whether page `page` of this array and of `other` is one and the same memory: true for a
    /// copy's pages that neither array has written since the copy.
    func sharesPage(_ page: Int, with other: PagedArray) -> Bool {
        page < pages.count && page < other.pages.count && pages[page] === other.pages[page]
    }

    // MARK: Filling from several threads

    /// Appends `added` elements left unwritten — they hold whatever their memory held — for
    /// ``disjointWriter()`` to fill: a loader that knows where every part goes writes them in
    /// parallel, and the memory is first touched there, not here. Every one must be written
    /// before the array is read.
    ///
    /// The new pages after the first are carved from one allocation (``PagedArraySlab``): made
    /// one by one, each page would be an allocation from the loading thread's heap — each
    /// growing the heap and faulting in a page for its header — before any chunk is read. One
    /// large allocation is mapped, untouched, in one call.
    ///
    /// The slab is carved from `shared` when given and there is room in it (``SlabMemory``: the
    /// columns of a block loaded together, in huge pages).
    mutating func appendUnwritten(_ added: Int, carvingFrom shared: SlabMemory? = nil) {
        reserveCapacity(count + added)   // a lone first page grows before any page follows it
        let needed = (count + added + pagedArrayPageCapacity - 1) >> pagedArrayPageShift
        if needed - pages.count > 1 {
            let slab = PagedArraySlab(pages: needed - pages.count, capacity: pagedArrayPageCapacity,
                                      stride: MemoryLayout<Element>.stride, alignment: MemoryLayout<Element>.alignment,
                                      carvingFrom: shared)
            for part in 0..<slab.pageCount { pages.append(PagedArrayPage(part, of: slab)) }
        }
        appendSpace(added) { _ in }
    }

    /// A writer of this array's elements that several threads may use at once, each writing
    /// elements no other writes (see ``DisjointWriter``). Makes every page this array's own
    /// first. The array must not be used, nor copied, until every user of the writer is done.
    mutating func disjointWriter() -> DisjointWriter {
        for page in pages.indices { makeOwn(page) }
        return DisjointWriter(pages: pages, count: count)
    }

    /// Writes a ``PagedArray``'s elements from several threads at once, made by
    /// ``disjointWriter()``: the pages it holds are its array's own (no copy shares them, so
    /// nobody reads them meanwhile), and its users write disjoint element ranges, so no element
    /// is written by two threads or read while written. Its users must be joined (as
    /// ``Parallel/forEach(_:threads:_:)`` joins its threads) before the array is used again.
    struct DisjointWriter: Sendable {
        fileprivate let pages: [PagedArrayPage]
        let count: Int

        /// Calls `body` with each page's part of the elements in `range`, in order.
        func update(_ range: Range<Int>, _ body: (UnsafeMutableBufferPointer<Element>) -> Void) {
            precondition(range.lowerBound >= 0 && range.upperBound <= count, "elements \(range) of \(count)")
            var index = range.lowerBound
            while index < range.upperBound {
                let page = index >> pagedArrayPageShift, offset = index & pagedArrayOffsetMask
                let length = Swift.min(range.upperBound - index, pagedArrayPageCapacity - offset)
                body(UnsafeMutableBufferPointer(start: PagedArray.elements(pages[page]) + offset, count: length))
                index += length
            }
        }

        /// Writes the elements whose bytes are `bytes` (unaligned, in the host's byte order)
        /// from element `start` on.
        func write(bytes: UnsafeRawBufferPointer, at start: Int) {
            precondition(bytes.count % MemoryLayout<Element>.stride == 0, "\(bytes.count) bytes are not whole elements")
            var copied = 0
            update(start..<start + bytes.count / MemoryLayout<Element>.stride) { part in
                let size = part.count * MemoryLayout<Element>.stride
                UnsafeMutableRawBufferPointer(part).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[copied..<copied + size]))
                copied += size
            }
        }
    }

    // MARK: Internals

    /// Adds a new page for `capacity` elements at the end.
    private mutating func addPage(capacity: Int) {
        let page = PagedArrayPage(capacity: capacity, stride: MemoryLayout<Element>.stride,
                                  alignment: MemoryLayout<Element>.alignment)
        pages.append(page)
    }

    /// Puts `replacement` (a copy) in place of page `page`.
    private mutating func setPage(_ page: Int, _ replacement: PagedArrayPage) {
        pages[page] = replacement
    }

    /// A page's memory, as this array's elements.
    private static func elements(_ page: PagedArrayPage) -> UnsafeMutablePointer<Element> {
        page.bytes.assumingMemoryBound(to: Element.self)
    }

    /// Appends `added` elements, calling `fill` with each page's part of the new space (raw
    /// memory the call must initialize) in order.
    private mutating func appendSpace(_ added: Int, _ fill: (UnsafeMutableBufferPointer<Element>) -> Void) {
        precondition(added >= 0, "appending \(added) elements")
        reserveCapacity(count + added)
        var remaining = added
        while remaining > 0 {
            let offset = count & pagedArrayOffsetMask
            let page = count >> pagedArrayPageShift
            if page == pages.count {
                addPage(capacity: pages.isEmpty ? Swift.max(8, Swift.min(remaining, pagedArrayPageCapacity)) : pagedArrayPageCapacity)
            } else {
                makeOwn(page)
                if offset == pages[page].capacity { growFirstPage(toHold: offset + remaining) }
            }
            let length = Swift.min(remaining, pages[page].capacity - offset)
            fill(UnsafeMutableBufferPointer(start: Self.elements(pages[page]) + offset, count: length))
            count += length
            remaining -= length
        }
    }

    /// Copies page `page` when another array shares it.
    private mutating func makeOwn(_ page: Int) {
        if !isKnownUniquelyReferenced(&pages[page]) {
            setPage(page, pages[page].copy(count: Swift.min(count - (page << pagedArrayPageShift), pages[page].capacity),
                                           capacity: pages[page].capacity))
        }
    }

    /// Replaces the lone first page with a larger one, holding at least `elements` (at most a
    /// full page).
    private mutating func growFirstPage(toHold elements: Int) {
        precondition(pages.count == 1, "only a lone first page grows")
        let capacity = Swift.min(pagedArrayPageCapacity, Swift.max(elements, pages[0].capacity * 2))
        setPage(0, pages[0].copy(count: Swift.min(count, pages[0].capacity), capacity: capacity))
    }
}

/// One page of a ``PagedArray``: raw memory for `capacity` elements of `stride` bytes, freed with
/// the page. Not generic, so that unoptimized builds need no generic metadata to reach a page.
// @unchecked Sendable: a page's memory is written only through a `PagedArray` mutating method,
// and only after `isKnownUniquelyReferenced` proved that array holds the page's only reference
// (or the page was just made and is not yet shared); a page two arrays share — in any isolation
// — is only read, and a reader's reference keeps it alive. So no page is ever written while
// another thread can read it. The one other writer is a `PagedArray.DisjointWriter`, made by a
// mutating method after the same proof for every page: while it is used its array is not, and
// its users write disjoint elements, so no element is written by two threads or read while
// written. Elements are `BitwiseCopyable`: freeing the memory deinitializes nothing.
final class PagedArrayPage: @unchecked Sendable {
    let bytes: UnsafeMutableRawPointer
    let capacity: Int
    let stride: Int
    let alignment: Int
    /// The allocation this page is a part of, when it was made with others
    /// (``PagedArray/appendUnwritten(_:)``); nil when the page owns its memory.
    private let slab: PagedArraySlab?

    init(capacity: Int, stride: Int, alignment: Int) {
        self.capacity = capacity
        self.stride = stride
        self.alignment = alignment
        bytes = .allocate(byteCount: capacity * stride, alignment: alignment)
        slab = nil
    }

    /// Page `part` of `slab`.
    init(_ part: Int, of slab: PagedArraySlab) {
        precondition(part >= 0 && part < slab.pageCount, "page \(part) of a slab of \(slab.pageCount)")
        capacity = slab.capacity
        stride = slab.stride
        alignment = slab.alignment
        bytes = slab.bytes + part * slab.capacity * slab.stride
        self.slab = slab
    }

    deinit {
        if slab == nil { bytes.deallocate() }
    }

    /// A page of `capacity` elements whose first `count` elements are this page's.
    func copy(count: Int, capacity: Int) -> PagedArrayPage {
        let copy = PagedArrayPage(capacity: capacity, stride: stride, alignment: alignment)
        copy.bytes.copyMemory(from: bytes, byteCount: count * stride)
        return copy
    }
}

/// One allocation that several ``PagedArrayPage``s of one array are parts of, freed with the last
/// of them: a page made by a copy or a later append owns its memory, so a slab's memory is held
/// while any page made from it is (at most its own size beyond what the array holds, when some of
/// its pages were copied and dropped).
// @unchecked Sendable: the slab never reads or writes its memory; it only frees it, in `deinit`,
// when no page refers to it any more. Its pages write their parts under their own rules
// (``PagedArrayPage``), and the parts are disjoint.
final class PagedArraySlab: @unchecked Sendable {
    let bytes: UnsafeMutableRawPointer
    let pageCount: Int
    let capacity: Int
    let stride: Int
    let alignment: Int
    /// The memory the slab was carved from, held while the slab is; nil when the slab owns its
    /// memory.
    private let shared: SlabMemory?

    /// A slab of `pages` pages, carved from `shared` when given and it has room, else allocated.
    init(pages: Int, capacity: Int, stride: Int, alignment: Int, carvingFrom shared: SlabMemory? = nil) {
        pageCount = pages
        self.capacity = capacity
        self.stride = stride
        self.alignment = alignment
        if let carved = shared?.take(pages * capacity * stride, alignment: alignment) {
            bytes = carved
            self.shared = shared
        } else {
            bytes = .allocate(byteCount: pages * capacity * stride, alignment: alignment)
            self.shared = nil
        }
    }

    deinit {
        if shared == nil { bytes.deallocate() }
    }
}

/// One allocation that the slabs of several arrays are carved from — the columns of a block a
/// snapshot load fills (``ColumnBlock/appendUnwritten(rows:arenaBytes:_:)``) — aligned to and
/// advised into transparent huge pages (``FreshMemory/preferHugePages(_:)``), freed with the
/// last slab carved from it. A warm start's cells are megabytes: in ordinary pages, a fault per
/// 4 KiB taken while the chunks are decompressed; in huge pages, one per 2 MiB.
// @unchecked Sendable: `used` is read and written only by `take`, which only the thread making a
// block calls, while the block's arrays are appended to and before any of them is shared; after
// that the memory is read and written only through the slabs' pages (under their rules), and the
// object itself only frees it, in `deinit`.
final class SlabMemory: @unchecked Sendable {
    private let memory: UnsafeMutableRawBufferPointer
    private var used = 0

    /// Memory for `byteCount` bytes of slabs (alignment padding included).
    init(byteCount: Int) {
        memory = .allocate(byteCount: byteCount, alignment: FreshMemory.hugePageSize)
        FreshMemory.preferHugePages(memory)
    }

    deinit { memory.deallocate() }

    /// The next `count` bytes, aligned to `alignment` (a power of two), or nil when they do not fit.
    func take(_ count: Int, alignment: Int) -> UnsafeMutableRawPointer? {
        let start = (used + alignment - 1) & ~(alignment - 1)
        guard start + count <= memory.count else { return nil }
        used = start + count
        return memory.baseAddress! + start
    }
}
