import Foundation

/// The tag byte a ``Column`` keeps per cell, and a snapshot stores for it: the raw value of the
/// cell's ``StorageClass``, named here for the cells' code.
enum CellTag {
    static var null: UInt8 { StorageClass.null.rawValue }
    static var integer: UInt8 { StorageClass.integer.rawValue }
    static var real: UInt8 { StorageClass.real.rawValue }
    static var text: UInt8 { StorageClass.text.rawValue }
    static var blob: UInt8 { StorageClass.blob.rawValue }

    /// The payload of a cell tagged `tag` once its text or blob bytes are `base` further into an
    /// arena (an integer's or a real's payload is its value, and stays).
    @inline(__always)
    static func rebased(_ payload: UInt64, tag: UInt8, by base: UInt64) -> UInt64 {
        tag >= text ? payload + base : payload
    }
}

/// The cells of one attribute, indexed by slot.
///
/// A cell is its storage class (`tags`), its payload (an integer's or a real's bit pattern,
/// or the arena offset of text and blob bytes) and, for text and blobs, its byte length. A free
/// slot's cells are NULL, so they hold no arena bytes. Each part is a ``PagedArray``: copies of a
/// column share its pages, and a copy that writes copies only the pages it writes.
struct Column: Sendable {
    var tags = PagedArray<UInt8>()
    var payloads = PagedArray<UInt64>()
    var lengths = PagedArray<UInt32>()

    /// Adds a NULL cell for a new slot.
    mutating func appendNull() {
        tags.append(CellTag.null)
        payloads.append(0)
        lengths.append(0)
    }

    /// Adds `count` NULL cells for new slots, in bulk.
    mutating func appendNulls(_ count: Int) {
        tags.append(repeating: CellTag.null, count: count)
        payloads.append(repeating: 0, count: count)
        lengths.append(repeating: 0, count: count)
    }

    /// Removes the last `count` cells (of free slots: NULL, holding no arena bytes).
    mutating func removeLast(_ count: Int) {
        tags.removeLast(count)
        payloads.removeLast(count)
        lengths.removeLast(count)
    }

    mutating func reserveCapacity(_ cells: Int) {
        tags.reserveCapacity(cells)
        payloads.reserveCapacity(cells)
        lengths.reserveCapacity(cells)
    }

    /// Makes the pages that hold the cells at `slots` this column's own, so that
    /// ``setNullInOwnPages(_:at:)`` may write them (``PagedArray/makeOwn(pagesCovering:)``).
    mutating func makeOwn(pagesCovering slots: [Int]) {
        tags.makeOwn(pagesCovering: slots)
        payloads.makeOwn(pagesCovering: slots)
        lengths.makeOwn(pagesCovering: slots)
    }

    /// Writes `cell` at `slot`, a NULL cell (holding no arena bytes) whose pages
    /// ``makeOwn(pagesCovering:)`` made this column's own since it was last copied.
    mutating func setNullInOwnPages(_ cell: (tag: UInt8, payload: UInt64, length: UInt32), at slot: Int) {
        assert(tags[slot] == CellTag.null, "a new value written over a cell")
        tags.setInOwnPage(cell.tag, at: slot)
        payloads.setInOwnPage(cell.payload, at: slot)
        lengths.setInOwnPage(cell.length, at: slot)
    }

    /// Copies the cells of attribute `attribute` of rows `rows` of `cells` into the NULL cells at
    /// `slots` (as many; holding no arena bytes), a page at a time: tags and lengths as they are,
    /// text and blob payloads moved by `base` (where the cells' page is in this column's arena:
    /// ``PagedArena/take(_:)``).
    mutating func copyNew(_ cells: CellRows, _ attribute: Int, rows: Range<Int>, at slots: Range<Int>, base: UInt64) {
        precondition(rows.count == slots.count, "\(rows.count) cells for \(slots.count) slots")
        cells.tags[attribute].withUnsafeBufferPointer { source in
            tags.update(slots) { part, from in
                assert(part.allSatisfy { $0 == CellTag.null }, "a new value written over a cell")
                part.baseAddress!.update(from: source.baseAddress! + rows.lowerBound + from, count: part.count)
            }
            cells.payloads[attribute].withUnsafeBufferPointer { payloadSource in
                payloads.update(slots) { part, from in
                    for index in part.indices {
                        let row = rows.lowerBound + from + index
                        part[index] = CellTag.rebased(payloadSource[row], tag: source[row], by: base)
                    }
                }
            }
        }
        cells.lengths[attribute].withUnsafeBufferPointer { source in
            lengths.update(slots) { part, from in
                part.baseAddress!.update(from: source.baseAddress! + rows.lowerBound + from, count: part.count)
            }
        }
    }

    /// Overwrites the cell at `slot` and returns the arena bytes its old value held, which are
    /// garbage from now on.
    mutating func replace(at slot: Int, tag: UInt8, payload: UInt64, length: UInt32) -> Int {
        let freed = tags[slot] >= CellTag.text ? Int(lengths[slot]) : 0
        tags[slot] = tag
        payloads[slot] = payload
        lengths[slot] = length
        return freed
    }

    /// The value of the cell at `slot`, its text or blob bytes read from `arena`.
    func value(at slot: Int, arena: some CellBytes) -> DatabaseValue {
        let payload = payloads[slot]
        switch tags[slot] {
        case CellTag.integer: return .integer(Int64(bitPattern: payload))
        case CellTag.real: return .real(Double(bitPattern: payload))
        case CellTag.text:
            return arena.withCellBytes(payload, count: Int(lengths[slot])) { .text(String(decoding: $0, as: UTF8.self)) }
        case CellTag.blob:
            return arena.withCellBytes(payload, count: Int(lengths[slot])) { .blob(Data($0)) }
        default: return .null
        }
    }

    /// Copies the text and blob bytes of every cell from `old` to the end of `new`, and points
    /// the cells at their new places.
    mutating func moveBytes(from old: some CellArena, to new: inout some CellArena) {
        for slot in tags.indices where tags[slot] >= CellTag.text {
            payloads[slot] = old.withCellBytes(payloads[slot], count: Int(lengths[slot])) { new.appendCell($0) }
        }
    }

    /// Appends a cell holding `value`, its text or blob bytes at the end of `arena`.
    mutating func append(_ value: DatabaseValue, arena: inout some CellArena) {
        let (tag, payload, length) = Self.cell(value, arena: &arena)
        tags.append(tag)
        payloads.append(payload)
        lengths.append(length)
    }

    /// Appends the cells given part by part, as a column keeps them (``CellBatch/cells(of:)``),
    /// their text and blob payloads moved by `base` (where their bytes now start in the arena).
    mutating func append(tags: UnsafeBufferPointer<UInt8>, payloads: UnsafeBufferPointer<UInt64>,
                         lengths: UnsafeBufferPointer<UInt32>, rebasedBy base: UInt64) {
        precondition(tags.count == payloads.count && tags.count == lengths.count, "a cell's parts differ in number")
        self.tags.append(contentsOf: tags)
        self.lengths.append(contentsOf: lengths)
        self.payloads.append(count: payloads.count) { part, before in
            for index in part.indices {
                part.initializeElement(at: index,
                                       to: CellTag.rebased(payloads[before + index], tag: tags[before + index], by: base))
            }
        }
    }

    /// Appends `count` cells left unwritten, for a ``DisjointWriter`` to fill
    /// (``PagedArray/appendUnwritten(_:)``).
    mutating func appendUnwritten(_ count: Int, carvingFrom shared: SlabMemory? = nil) {
        tags.appendUnwritten(count, carvingFrom: shared)
        payloads.appendUnwritten(count, carvingFrom: shared)
        lengths.appendUnwritten(count, carvingFrom: shared)
    }

    /// The bytes ``appendUnwritten(_:carvingFrom:)`` carves for `count` cells appended to an
    /// empty column: the whole pages after the first (which each array makes on its own,
    /// ``PagedArray/appendUnwritten(_:carvingFrom:)``) of a tag, a payload and a length each, and
    /// alignment. Carving more would leave memory that a huge page backs but nothing uses.
    static func unwrittenBytes(_ count: Int) -> Int {
        let pages = (count + pagedArrayPageCapacity - 1) >> pagedArrayPageShift
        guard pages > 1 else { return 0 }
        return (pages - 1) * pagedArrayPageCapacity * (MemoryLayout<UInt8>.stride + MemoryLayout<UInt64>.stride
            + MemoryLayout<UInt32>.stride) + 2 * MemoryLayout<UInt64>.alignment
    }

    /// A writer of this column's cells that several threads may use at once, each writing cells
    /// no other writes (``PagedArray/disjointWriter()``). The column must not be used until every
    /// user of the writer is done.
    mutating func disjointWriter() -> DisjointWriter {
        DisjointWriter(tags: tags.disjointWriter(), payloads: payloads.disjointWriter(), lengths: lengths.disjointWriter())
    }

    /// Writes a column's cells from several threads at once (see ``PagedArray/DisjointWriter``).
    struct DisjointWriter: Sendable {
        let tags: PagedArray<UInt8>.DisjointWriter
        let payloads: PagedArray<UInt64>.DisjointWriter
        let lengths: PagedArray<UInt32>.DisjointWriter

        /// Writes cells from `start` on, read from little-endian bytes as a snapshot chunk holds
        /// them: one tag per cell, an 8-byte value per integer or real cell and a 4-byte length
        /// per text or blob cell (unaligned, in cell order). Text and blob bytes lie one after
        /// the other in the arena from `base` on, so each cell's payload is where the previous
        /// one's bytes end. The parts must agree with the tags (the loader checked them): a
        /// column whose values are all numbers, or all text and blobs, is told by their sizes.
        func write(tags: UnsafeRawBufferPointer, numbers: UnsafeRawBufferPointer, lengths: UnsafeRawBufferPointer,
                   at start: Int, bytesFrom base: UInt64) {
            let count = tags.count
            self.tags.write(bytes: tags, at: start)
            // A column of numbers only, or of text and blobs only (most are): copied and summed,
            // not looked at cell by cell.
            if numbers.count == count * 8 {
                self.payloads.write(bytes: numbers, at: start)
                self.lengths.update(start..<start + count) { $0.update(repeating: 0) }
                return
            }
            if lengths.count == count * 4 {
                self.lengths.write(bytes: lengths, at: start)
                var cell = 0, next = base
                self.payloads.update(start..<start + count) { part in
                    for index in part.indices {
                        part[index] = next
                        next &+= UInt64(lengths.loadUnaligned(fromByteOffset: cell * 4, as: UInt32.self))
                        cell += 1
                    }
                }
                return
            }
            var cell = 0, number = 0, text = 0, next = base
            self.payloads.update(start..<start + count) { part in
                for index in part.indices {
                    let tag = tags[cell]
                    if tag >= CellTag.text {
                        part[index] = next
                        next &+= UInt64(lengths.loadUnaligned(fromByteOffset: text * 4, as: UInt32.self))
                        text += 1
                    } else if tag == CellTag.null {
                        part[index] = 0
                    } else {
                        part[index] = numbers.loadUnaligned(fromByteOffset: number * 8, as: UInt64.self)
                        number += 1
                    }
                    cell += 1
                }
            }
            precondition(number * 8 == numbers.count && text * 4 == lengths.count, "a column's parts disagree with its tags")
            cell = 0
            text = 0
            self.lengths.update(start..<start + count) { part in
                for index in part.indices {
                    if tags[cell] >= CellTag.text {
                        part[index] = lengths.loadUnaligned(fromByteOffset: text * 4, as: UInt32.self)
                        text += 1
                    } else {
                        part[index] = 0
                    }
                    cell += 1
                }
            }
        }
    }

    /// The tag, payload and length of a cell holding `value`; text and blob bytes are appended to
    /// `arena` (the payload says where).
    static func cell(_ value: DatabaseValue, arena: inout some CellArena) -> (UInt8, UInt64, UInt32) {
        switch value {
        case .null: return (CellTag.null, 0, 0)
        case .integer(let integer): return (CellTag.integer, UInt64(bitPattern: integer), 0)
        case .real(let real): return (CellTag.real, real.bitPattern, 0)
        case .text(var text):
            // The UTF-8 bytes themselves (NUL included), not a C string.
            return text.withUTF8 { cell(CellTag.text, UnsafeRawBufferPointer($0), arena: &arena) }
        case .blob(let data):
            return data.withUnsafeBytes { cell(CellTag.blob, $0, arena: &arena) }
        }
    }

    /// A text or blob cell holding `bytes`, appended to `arena`.
    static func cell(_ tag: UInt8, _ bytes: UnsafeRawBufferPointer, arena: inout some CellArena) -> (UInt8, UInt64, UInt32) {
        guard let length = UInt32(exactly: bytes.count) else {
            preconditionFailure("a value has \(bytes.count) bytes; a cell holds at most 4 GiB")
        }
        return (tag, arena.appendCell(bytes), length)
    }
}
