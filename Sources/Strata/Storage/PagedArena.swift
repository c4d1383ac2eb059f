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

/// The text and blob bytes of a ``ColumnTable``, in pages: a cell's payload is its page number
/// (high 32 bits) and its offset in that page (low 32).
///
/// Copies of a table share their pages (each is a copy-on-write array), and bytes are only ever
/// appended — to the last page while it has room, else to a new one — so a copy that writes
/// copies at most the last page it shares, never the whole arena. What that buys: a merge
/// prepared off the main actor on a copy of a 100,000-article table (``ObjectGraph``) wrote
/// 3 MB of new text after first copying the 30 MB the table held; it now copies at most
/// ``pageSize``. A value larger than a page gets a page of its own; a block's arena, adopted
/// whole, becomes one page as it is.
struct PagedArena: CellArena, Sendable {
    /// The room a new page is made with.
    static let pageSize = 1 << 20

    private(set) var pages: [[UInt8]] = []
    /// The bytes held, in every page.
    private(set) var count = 0

    init() {}

    /// An arena whose only page is `bytes` (a block's arena: its cells' offsets are their
    /// payloads as they are), or nil when it is too large for one page (4 GiB).
    init?(adopting bytes: [UInt8]) {
        guard bytes.count <= Int(UInt32.max) else { return nil }
        pages = bytes.isEmpty ? [] : [bytes]
        count = bytes.count
    }

    func withCellBytes<R>(_ payload: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard count > 0 else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        let start = Int(truncatingIfNeeded: payload & 0xFFFF_FFFF)
        return try pages[Int(truncatingIfNeeded: payload >> 32)].withUnsafeBytes {
            try body(UnsafeRawBufferPointer(rebasing: $0[start..<start + count]))
        }
    }

    mutating func appendCell(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        guard !bytes.isEmpty else { return 0 }
        precondition(bytes.count <= Int(UInt32.max), "a value has \(bytes.count) bytes; a cell holds at most 4 GiB")
        if let last = pages.indices.last, pages[last].count + bytes.count <= Self.pageSize {
            let offset = pages[last].count
            pages[last].append(contentsOf: bytes)
            count += bytes.count
            return UInt64(last) << 32 | UInt64(offset)
        }
        var page: [UInt8] = []
        page.reserveCapacity(Swift.max(Self.pageSize, bytes.count))
        page.append(contentsOf: bytes)
        pages.append(page)
        count += bytes.count
        return UInt64(pages.count - 1) << 32
    }
}
