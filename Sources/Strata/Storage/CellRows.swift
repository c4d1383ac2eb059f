import Foundation

/// Rows in a ``ColumnTable``'s cell form, detached from any table: the rows of a change set's
/// saves of one entity, built on the thread that seals the change set, so that a context merging
/// it copies cells instead of converting values (``ColumnTable/writeNew(_:rows:at:base:version:firstUse:)``)
/// and takes their text and blob bytes as one arena page instead of copying them cell by cell
/// (``ColumnTable/arenaBase(for:)``).
///
/// Row `r`'s cell of attribute `a` is `tags[a][r]`, `payloads[a][r]`, `lengths[a][r]`, as a
/// ``Column`` keeps it; a text or blob payload is an offset into `page`, where each row's bytes
/// follow the previous row's: row `r` holds `rowStarts[r]..<rowStarts[r + 1]`. `keyHashes[r]`
/// is the ``KeyProbe/hash`` of row `r`'s key (the hash is per process, so it holds in any
/// context), and `order` lists the rows in the entity's snapshot order, so that a merge hands a
/// table's sorted index its new rows sorted already. Immutable once made, so any number of
/// contexts read it at once.
final class CellRows: Sendable {
    /// The number of rows.
    let count: Int
    /// The primary key's attribute position.
    let keyPosition: Int
    let tags: [[UInt8]]
    let payloads: [[UInt64]]
    let lengths: [[UInt32]]
    /// Every row's text and blob bytes, written before the rows are shared and never again.
    let page: ArenaPage
    /// Where each row's bytes start in `page`, and (last) where the last row's end.
    let rowStarts: [UInt32]
    let keyHashes: [UInt32]
    /// The rows' keys, when no two rows share one: what a merge lists as inserted when every row
    /// is new to the context (hashing each key into a set there was a fifth of the merge's work).
    let keys: Set<DatabaseValue>?
    /// The rows in `sort`'s order, then by key (``RowOrder``), or nil when there is no order.
    let order: [Int]?
    /// Whether no two rows share a key and no key is NULL: a table that claims slots for rows of
    /// these cells need not write their key cells before the rest (``ColumnTable/claimNew(_:cells:row:base:)``).
    let keysAreDistinct: Bool

    /// The cells of `rows`, each with `attributeCount` values, its key at `keyPosition`, listed in
    /// `sort`'s order too unless it is empty; nil when their text and blob bytes together exceed
    /// what a page holds (4 GiB).
    /// - Precondition: every row has `attributeCount` values.
    init?(_ rows: [[DatabaseValue]], attributeCount: Int, keyPosition: Int,
          sort: [(position: Int, ascending: Bool)] = []) {
        var total = 0
        for row in rows {
            precondition(row.count == attributeCount, "a row has \(row.count) values, not \(attributeCount)")
            for value in row { total += Self.byteCount(value) }
        }
        guard total <= Int(UInt32.max) else { return nil }
        var page = ArenaPage(capacity: Swift.max(total, 1))
        var tags = Array(repeating: [UInt8](), count: attributeCount)
        var payloads = Array(repeating: [UInt64](), count: attributeCount)
        var lengths = Array(repeating: [UInt32](), count: attributeCount)
        for attribute in 0..<attributeCount {
            tags[attribute].reserveCapacity(rows.count)
            payloads[attribute].reserveCapacity(rows.count)
            lengths[attribute].reserveCapacity(rows.count)
        }
        var rowStarts: [UInt32] = []
        rowStarts.reserveCapacity(rows.count + 1)
        var keyHashes: [UInt32] = []
        keyHashes.reserveCapacity(rows.count)
        for row in rows {
            rowStarts.append(UInt32(page.used))
            for attribute in 0..<attributeCount {
                let (tag, payload, length) = Column.cell(row[attribute], arena: &page)
                tags[attribute].append(tag)
                payloads[attribute].append(payload)
                lengths[attribute].append(length)
            }
            let key = (tags[keyPosition].last!, payloads[keyPosition].last!, lengths[keyPosition].last!)
            keyHashes.append(Self.probe(key, in: page).hash)
        }
        rowStarts.append(UInt32(page.used))
        self.count = rows.count
        self.keyPosition = keyPosition
        self.tags = tags
        self.payloads = payloads
        self.lengths = lengths
        self.page = page
        self.rowStarts = rowStarts
        self.keyHashes = keyHashes
        let keys = Set(rows.lazy.map { $0[keyPosition] })
        self.keys = keys.count == rows.count ? keys : nil
        self.keysAreDistinct = keys.count == rows.count && !keys.contains(.null)
        self.order = sort.isEmpty ? nil : Self.sorted(rows.count, sort: sort, keyPosition: keyPosition, tags: tags,
                                                       payloads: payloads, lengths: lengths, page: page)
    }

    /// Rows `0..<count` in `sort`'s order, compared as a table compares its rows (``RowOrder``,
    /// over columns holding only the attributes it reads).
    private static func sorted(_ count: Int, sort: [(position: Int, ascending: Bool)], keyPosition: Int, tags: [[UInt8]],
                               payloads: [[UInt64]], lengths: [[UInt32]], page: ArenaPage) -> [Int] {
        var columns = Array(repeating: Column(), count: tags.count)
        for position in Set(sort.map(\.position) + [keyPosition]) {
            columns[position].tags.append(contentsOf: tags[position])
            columns[position].payloads.append(contentsOf: payloads[position])
            columns[position].lengths.append(contentsOf: lengths[position])
        }
        return RowOrder(columns: columns, arena: page, sort: sort, keyPosition: keyPosition).sorted(Array(0..<count))
    }

    /// The number of attributes.
    var attributeCount: Int { tags.count }

    /// A probe for row `row`'s key, its bytes borrowed from ``page`` (valid while this lives).
    func probe(ofRow row: Int) -> KeyProbe {
        Self.probe((tags[keyPosition][row], payloads[keyPosition][row], lengths[keyPosition][row]), in: page)
    }

    /// A probe for a key cell whose bytes are in `page`: hashed from the cell, as a table's key
    /// hash hashes the keys it holds.
    private static func probe(_ cell: (tag: UInt8, payload: UInt64, length: UInt32), in page: ArenaPage) -> KeyProbe {
        guard cell.tag >= CellTag.text else { return KeyProbe(tag: cell.tag, payload: cell.payload) }
        return KeyProbe(tag: cell.tag, payload: 0, bytes: page.bytes(Int(cell.payload), Int(cell.length)))
    }

    /// The text and blob bytes of row `row`.
    func byteCount(ofRow row: Int) -> Int { Int(rowStarts[row + 1] - rowStarts[row]) }

    /// The bytes `value` puts in a page.
    private static func byteCount(_ value: DatabaseValue) -> Int {
        switch value {
        case .text(let text): text.utf8.count
        case .blob(let data): data.count
        case .null, .integer, .real: 0
        }
    }
}

/// A page written as an arena while it is being built (``CellRows``), before anything shares it.
extension ArenaPage: CellArena {
    func withCellBytes<R>(_ payload: UInt64, count: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(bytes(Int(truncatingIfNeeded: payload), count))
    }

    func appendCell(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return 0 }
        return UInt64(append(source, count: bytes.count))
    }
}
