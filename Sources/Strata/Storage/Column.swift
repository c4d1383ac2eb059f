import Foundation

/// The storage class of a cell: the byte a ``Column`` keeps per cell, and the byte a snapshot
/// stores for it.
enum CellTag {
    static let null: UInt8 = 0
    static let integer: UInt8 = 1
    static let real: UInt8 = 2
    static let text: UInt8 = 3
    static let blob: UInt8 = 4
    /// The highest tag; anything above it is not a cell.
    static let last: UInt8 = blob
}

/// The cells of one attribute, indexed by slot.
///
/// A cell is its storage class (`tags`), its payload (an integer's or a real's bit pattern,
/// or the arena offset of text and blob bytes) and, for text and blobs, its byte length. A free
/// slot's cells are NULL, so they hold no arena bytes.
struct Column: Sendable {
    var tags: [UInt8] = []
    var payloads: [UInt64] = []
    var lengths: [UInt32] = []

    /// Adds a NULL cell for a new slot.
    mutating func appendNull() {
        tags.append(CellTag.null)
        payloads.append(0)
        lengths.append(0)
    }

    /// Adds `count` NULL cells for new slots, in bulk.
    mutating func appendNulls(_ count: Int) {
        tags.append(contentsOf: repeatElement(CellTag.null, count: count))
        payloads.append(contentsOf: repeatElement(0, count: count))
        lengths.append(contentsOf: repeatElement(0, count: count))
    }

    mutating func reserveCapacity(_ cells: Int) {
        tags.reserveCapacity(cells)
        payloads.reserveCapacity(cells)
        lengths.reserveCapacity(cells)
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
    func value(at slot: Int, arena: [UInt8]) -> DatabaseValue {
        let payload = payloads[slot]
        switch tags[slot] {
        case CellTag.integer: return .integer(Int64(bitPattern: payload))
        case CellTag.real: return .real(Double(bitPattern: payload))
        case CellTag.text:
            let start = Int(truncatingIfNeeded: payload)
            let end = start + Int(lengths[slot])
            return arena.withUnsafeBufferPointer { bytes in
                .text(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
            }
        case CellTag.blob:
            let start = Int(truncatingIfNeeded: payload)
            let end = start + Int(lengths[slot])
            return arena.withUnsafeBufferPointer { bytes in
                .blob(Data(UnsafeBufferPointer(rebasing: bytes[start..<end])))
            }
        default: return .null
        }
    }

    /// Copies the text and blob bytes of every cell from `old` to the end of `new`, and points
    /// the cells at their new offsets.
    mutating func moveBytes(from old: UnsafeBufferPointer<UInt8>, to new: inout [UInt8]) {
        for slot in tags.indices where tags[slot] >= CellTag.text {
            let start = Int(truncatingIfNeeded: payloads[slot])
            payloads[slot] = UInt64(new.count)
            new.append(contentsOf: UnsafeBufferPointer(rebasing: old[start..<start + Int(lengths[slot])]))
        }
    }

    /// Appends a cell holding `value`, its text or blob bytes at the end of `arena`.
    mutating func append(_ value: DatabaseValue, arena: inout [UInt8]) {
        let (tag, payload, length) = Self.cell(value, arena: &arena)
        tags.append(tag)
        payloads.append(payload)
        lengths.append(length)
    }

    /// Appends a cell holding `cell`, its bytes copied into `arena`: no `String` or `Data` made.
    mutating func append(_ cell: RawCell, arena: inout [UInt8]) {
        let (tag, payload, length): (UInt8, UInt64, UInt32)
        switch cell {
        case .null: (tag, payload, length) = (CellTag.null, 0, 0)
        case .integer(let integer): (tag, payload, length) = (CellTag.integer, UInt64(bitPattern: integer), 0)
        case .real(let real): (tag, payload, length) = (CellTag.real, real.bitPattern, 0)
        case .text(let bytes): (tag, payload, length) = (CellTag.text, UInt64(arena.count), Self.append(bytes, to: &arena))
        case .blob(let bytes): (tag, payload, length) = (CellTag.blob, UInt64(arena.count), Self.append(bytes, to: &arena))
        }
        tags.append(tag)
        payloads.append(payload)
        lengths.append(length)
    }

    /// Appends `count` cells read from little-endian bytes (`count` tags, then `count` 8-byte
    /// payloads and 4-byte lengths, unaligned), whose text and blob offsets move by `base` (their
    /// arena bytes were appended behind this column's arena at that offset).
    mutating func append(tags: UnsafeRawBufferPointer, payloads: UnsafeRawBufferPointer, lengths: UnsafeRawBufferPointer,
                         rebasedBy base: UInt64) {
        let count = tags.count
        precondition(payloads.count == count * 8 && lengths.count == count * 4, "a column's parts differ in length")
        let start = self.tags.count
        self.tags.append(contentsOf: tags)
        self.payloads.append(contentsOf: repeatElement(0, count: count))
        self.lengths.append(contentsOf: repeatElement(0, count: count))
        self.payloads.withUnsafeMutableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[(start * 8)...]).copyMemory(from: payloads) }
        self.lengths.withUnsafeMutableBytes { UnsafeMutableRawBufferPointer(rebasing: $0[(start * 4)...]).copyMemory(from: lengths) }
        guard base > 0 else { return }
        for cell in start..<self.tags.count where self.tags[cell] >= CellTag.text { self.payloads[cell] += base }
    }

    /// The tag, payload and length of a cell holding `value`; text and blob bytes are appended to
    /// `arena` (the payload is their offset).
    static func cell(_ value: DatabaseValue, arena: inout [UInt8]) -> (UInt8, UInt64, UInt32) {
        switch value {
        case .null: return (CellTag.null, 0, 0)
        case .integer(let integer): return (CellTag.integer, UInt64(bitPattern: integer), 0)
        case .real(let real): return (CellTag.real, real.bitPattern, 0)
        case .text(var text):
            let offset = UInt64(arena.count)
            // The UTF-8 bytes themselves (NUL included), not a C string.
            return (CellTag.text, offset, text.withUTF8 { append(UnsafeRawBufferPointer($0), to: &arena) })
        case .blob(let data):
            let offset = UInt64(arena.count)
            return (CellTag.blob, offset, data.withUnsafeBytes { append($0, to: &arena) })
        }
    }

    /// Appends `bytes` to `arena` and returns their count.
    private static func append(_ bytes: UnsafeRawBufferPointer, to arena: inout [UInt8]) -> UInt32 {
        guard !bytes.isEmpty else { return 0 }
        guard let length = UInt32(exactly: bytes.count) else {
            preconditionFailure("a value has \(bytes.count) bytes; a cell holds at most 4 GiB")
        }
        bytes.withMemoryRebound(to: UInt8.self) { arena.append(contentsOf: $0) }
        return length
    }
}
