/// A growable array of plain data in fixed-size pages that copies share: a copy that writes
/// copies only the pages it writes, not the whole array.
///
/// What a ``ColumnTable``'s columns and per-slot bookkeeping are made of. A merge prepared off
/// the main actor writes a copy of the main context's table while the main actor keeps reading
/// the original; with one contiguous array per column, the copy's first write to each column
/// copied it whole (11 MB of cells and bookkeeping at 90,000 articles, every merge, into fresh
/// memory that then faulted in). With pages, a merge that appends 10,000 rows copies the few
/// pages it appends to, and one that updates scattered rows copies the pages those rows are in.
///
/// Elements are `BitwiseCopyable` (tags, payloads, flags, counters): pages are raw memory that is
/// copied with `memcpy` and freed without deinitializing anything. Every page holds
/// ``pageCapacity`` elements except a lone first page, which grows by doubling until it is full
/// (so a table of five rows does not take 50 KB per column). Element `i` is at
/// `pages[i >> pageShift][i & (pageCapacity - 1)]`.
///
/// Writes go through ``subscript(_:)`` (copying the page first when another array shares it),
/// or in bulk: ``makeOwn(pagesCovering:)`` once, then ``setInOwnPage(_:at:)`` per element with no
/// check per element.
struct PagedArray<Element: BitwiseCopyable>: RandomAccessCollection, MutableCollection, Sendable {
    static var pageShift: Int { 12 }
    /// The elements a full page holds.
    static var pageCapacity: Int { 1 << pageShift }

    private var pages: [Page] = []
    /// The number of elements.
    private(set) var count = 0

    init() {}

    init(repeating element: Element, count: Int) {
        append(repeating: element, count: count)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(index: Int) -> Element {
        get {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "index \(index) out of \(count) elements")
            return pages[index >> Self.pageShift].base[index & (Self.pageCapacity - 1)]
        }
        set {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "index \(index) out of \(count) elements")
            let page = index >> Self.pageShift
            makeOwn(page)
            pages[page].base[index & (Self.pageCapacity - 1)] = newValue
        }
    }

    // MARK: Growing and shrinking

    @inline(__always)
    mutating func append(_ element: Element) {
        let offset = count & (Self.pageCapacity - 1)
        let page = count >> Self.pageShift
        // The common case, kept small enough to inline: room in a page this array owns.
        if page < pages.count, offset < pages[page].capacity, isKnownUniquelyReferenced(&pages[page]) {
            pages[page].base[offset] = element
            count += 1
        } else {
            appendToNewOrSharedPage(element)
        }
    }

    /// ``append(_:)`` when the element starts a page, the lone first page is full, or the page
    /// is shared.
    @inline(never)
    private mutating func appendToNewOrSharedPage(_ element: Element) {
        let offset = count & (Self.pageCapacity - 1)
        let page = count >> Self.pageShift
        if page == pages.count {
            pages.append(Page(capacity: pages.isEmpty ? 8 : Self.pageCapacity))
        } else {
            makeOwn(page)
            if offset == pages[page].capacity { growFirstPage(toHold: offset + 1) }
        }
        pages[page].base[offset] = element
        count += 1
    }

    /// Appends `count` copies of `element`.
    mutating func append(repeating element: Element, count added: Int) {
        appendSpace(added) { $0.initialize(repeating: element) }
    }

    /// Appends the elements whose bytes are `bytes` (unaligned, in the host's byte order).
    mutating func append(bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count % MemoryLayout<Element>.stride == 0, "\(bytes.count) bytes are not whole elements")
        var copied = 0
        appendSpace(bytes.count / MemoryLayout<Element>.stride) { space in
            let size = space.count * MemoryLayout<Element>.stride
            UnsafeMutableRawBufferPointer(space).copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[copied..<copied + size]))
            copied += size
        }
    }

    /// Removes the last `count` elements.
    mutating func removeLast(_ removed: Int) {
        precondition(removed >= 0 && removed <= count, "removing \(removed) of \(count) elements")
        count -= removed
        let needed = (count + Self.pageCapacity - 1) >> Self.pageShift
        if pages.count > needed { pages.removeLast(pages.count - needed) }
    }

    mutating func removeAll() {
        pages = []
        count = 0
    }

    /// Makes room for `capacity` elements without growing the first page again (the only page
    /// that ever grows in place); later pages are made as they are reached.
    mutating func reserveCapacity(_ capacity: Int) {
        guard capacity > 0 else { return }
        if capacity > count { pages.reserveCapacity((capacity + Self.pageCapacity - 1) >> Self.pageShift) }
        if pages.isEmpty {
            pages.append(Page(capacity: Swift.min(capacity, Self.pageCapacity)))
        } else if pages.count == 1, pages[0].capacity < Swift.min(capacity, Self.pageCapacity) {
            growFirstPage(toHold: capacity)
        }
    }

    // MARK: Bulk access

    /// Makes the pages that hold the elements at `indices` this array's own (copying each that
    /// another array shares), so that ``setInOwnPage(_:at:)`` may write them.
    mutating func makeOwn(pagesCovering indices: some Sequence<Int>) {
        var last = -1
        for index in indices {
            let page = index >> Self.pageShift
            if page != last { makeOwn(page) }
            last = page
        }
    }

    /// Writes `element` at `index`, whose page ``makeOwn(pagesCovering:)`` made this array's own
    /// since the array was last copied: no check that the page is not shared.
    mutating func setInOwnPage(_ element: Element, at index: Int) {
        precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "index \(index) out of \(count) elements")
        let page = index >> Self.pageShift
        assert(isKnownUniquelyReferenced(&pages[page]), "a shared page written")
        pages[page].base[index & (Self.pageCapacity - 1)] = element
    }

    /// Calls `body` with the elements from `start` on, a page's part at a time, each part made
    /// this array's own first: for rewriting a run of elements in place.
    mutating func updateEach(from start: Int, _ body: (UnsafeMutableBufferPointer<Element>) -> Void) {
        var index = start
        while index < count {
            let page = index >> Self.pageShift, offset = index & (Self.pageCapacity - 1)
            let length = Swift.min(count - index, Self.pageCapacity - offset)
            makeOwn(page)
            body(UnsafeMutableBufferPointer(start: pages[page].base + offset, count: length))
            index += length
        }
    }

    /// Calls `body` with the elements in order, a page's worth at a time.
    func forEachPart(_ body: (UnsafeBufferPointer<Element>) -> Void) {
        var index = 0
        for page in pages where index < count {
            let length = Swift.min(count - index, Self.pageCapacity)
            body(UnsafeBufferPointer(start: page.base, count: length))
            index += length
        }
    }

    /// Whether page `page` of this array and of `other` is one and the same memory: true for a
    /// copy's pages that neither array has written since the copy.
    func sharesPage(_ page: Int, with other: PagedArray) -> Bool {
        page < pages.count && page < other.pages.count && pages[page] === other.pages[page]
    }

    // MARK: Internals

    /// Appends `added` elements, calling `fill` with each page's part of the new space (raw
    /// memory the call must initialize) in order.
    private mutating func appendSpace(_ added: Int, _ fill: (UnsafeMutableBufferPointer<Element>) -> Void) {
        precondition(added >= 0, "appending \(added) elements")
        reserveCapacity(count + added)
        var remaining = added
        while remaining > 0 {
            let offset = count & (Self.pageCapacity - 1)
            let page = count >> Self.pageShift
            if page == pages.count {
                pages.append(Page(capacity: pages.isEmpty ? Swift.max(8, Swift.min(remaining, Self.pageCapacity)) : Self.pageCapacity))
            } else {
                makeOwn(page)
                if offset == pages[page].capacity { growFirstPage(toHold: offset + remaining) }
            }
            let length = Swift.min(remaining, pages[page].capacity - offset)
            fill(UnsafeMutableBufferPointer(start: pages[page].base + offset, count: length))
            count += length
            remaining -= length
        }
    }

    /// Copies page `page` when another array shares it.
    private mutating func makeOwn(_ page: Int) {
        if !isKnownUniquelyReferenced(&pages[page]) {
            pages[page] = pages[page].copy(count: Swift.min(count - (page << Self.pageShift), pages[page].capacity),
                                           capacity: pages[page].capacity)
        }
    }

    /// Replaces the lone first page with a larger one, holding at least `elements` (at most a
    /// full page).
    private mutating func growFirstPage(toHold elements: Int) {
        precondition(pages.count == 1, "only a lone first page grows")
        let capacity = Swift.min(Self.pageCapacity, Swift.max(elements, pages[0].capacity * 2))
        pages[0] = pages[0].copy(count: Swift.min(count, pages[0].capacity), capacity: capacity)
    }

    /// One page: raw memory for `capacity` elements, freed with the page.
    // @unchecked Sendable: a page's memory is written only through a `PagedArray` mutating
    // method, and only after `isKnownUniquelyReferenced` proved that array holds the page's only
    // reference (or the page was just made and is not yet shared); a page two arrays share — in
    // any isolation — is only read, and a reader's reference keeps it alive. So no page is ever
    // written while another thread can read it. Elements are `BitwiseCopyable`: freeing the
    // memory deinitializes nothing.
    final class Page: @unchecked Sendable {
        let base: UnsafeMutablePointer<Element>
        let capacity: Int

        init(capacity: Int) {
            self.capacity = capacity
            base = .allocate(capacity: capacity)
        }

        deinit { base.deallocate() }

        /// A page of `capacity` whose first `count` elements are this page's.
        func copy(count: Int, capacity: Int) -> Page {
            let copy = Page(capacity: capacity)
            copy.base.initialize(from: base, count: count)
            return copy
        }
    }
}
