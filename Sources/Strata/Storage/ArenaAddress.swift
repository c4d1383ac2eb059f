/// Where a text or blob cell's bytes start in an arena of pages (``PagedArena``, a loaded
/// ``ColumnBlock`` with deferred pages): a page number and an offset in that page, packed into
/// the cell's 64-bit payload — the page in the high 32 bits, the offset in the low 32.
///
/// Page 0's addresses are plain offsets, so the cells of a block whose bytes are one buffer read
/// their payloads as offsets, and a table adopting that buffer as its first page keeps them as
/// they are. A page holds at most 4 GiB.
struct ArenaAddress {
    /// The page the bytes are in.
    var page: Int
    /// Where the bytes start in their page.
    var offset: Int

    init(page: Int, offset: Int = 0) {
        self.page = page
        self.offset = offset
    }

    /// The address a cell's payload holds.
    init(payload: UInt64) {
        page = Int(truncatingIfNeeded: payload >> 32)
        offset = Int(truncatingIfNeeded: payload & 0xFFFF_FFFF)
    }

    /// The payload of a cell whose bytes start here; for page `n`'s first byte, the base that
    /// turns an offset into that page into a payload (`base + offset`).
    var payload: UInt64 { UInt64(truncatingIfNeeded: page) << 32 | UInt64(truncatingIfNeeded: offset) }
}
