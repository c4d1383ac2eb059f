import Foundation

/// A key cell to hash or look for: its storage class, its payload (an integer's or a real's
/// bits) and, for text and blobs, its bytes — borrowed, valid only while whoever made the probe
/// holds them.
struct KeyProbe {
    let tag: UInt8
    let payload: UInt64
    let bytes: UnsafeRawBufferPointer

    init(tag: UInt8, payload: UInt64, bytes: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0)) {
        self.tag = tag
        self.payload = payload
        self.bytes = bytes
    }

    /// Calls `body` with a probe for `value`, whose bytes are valid only inside `body`.
    static func with<T>(_ value: DatabaseValue, _ body: (KeyProbe) throws -> T) rethrows -> T {
        switch value {
        case .null: return try body(KeyProbe(tag: CellTag.null, payload: 0))
        case .integer(let integer): return try body(KeyProbe(tag: CellTag.integer, payload: UInt64(bitPattern: integer)))
        case .real(let real): return try body(KeyProbe(tag: CellTag.real, payload: real.bitPattern))
        case .text(var text):
            return try text.withUTF8 { try body(KeyProbe(tag: CellTag.text, payload: 0, bytes: UnsafeRawBufferPointer($0))) }
        case .blob(let data):
            return try data.withUnsafeBytes { try body(KeyProbe(tag: CellTag.blob, payload: 0, bytes: $0)) }
        }
    }

    /// Whether this probe and the cell `(tag, payload)` with `bytes` hold one value, as
    /// ``DatabaseValue``'s `==` says: text and blobs byte for byte, reals as numbers.
    func matches(tag: UInt8, payload: UInt64, bytes: UnsafeRawBufferPointer) -> Bool {
        guard tag == self.tag else { return false }
        switch tag {
        case CellTag.integer: return payload == self.payload
        case CellTag.real: return Double(bitPattern: payload) == Double(bitPattern: self.payload)
        case CellTag.text, CellTag.blob:
            guard bytes.count == self.bytes.count else { return false }
            guard let left = bytes.baseAddress, let right = self.bytes.baseAddress else { return true }
            return memcmp(left, right, bytes.count) == 0
        default: return true
        }
    }

    /// The probe as a column whose numbers take `numbers` stores its value (``NumberClass``):
    /// `1` and `1.0` are one key where SQLite equates them.
    func normalized(_ numbers: NumberClass) -> KeyProbe {
        let stored = numbers.normalized(tag: tag, payload: payload)
        return KeyProbe(tag: stored.tag, payload: stored.payload, bytes: bytes)
    }

    /// Whether `other` holds this probe's value.
    func matches(_ other: KeyProbe) -> Bool { matches(tag: other.tag, payload: other.payload, bytes: other.bytes) }

    /// The probe's hash: equal for values ``matches(tag:payload:bytes:)`` equates (a real's
    /// zero hashes one way whatever its sign). Seeded per process, so that keys chosen to collide
    /// cannot be chosen ahead of time — unless `SWIFT_DETERMINISTIC_HASHING` is set, as for
    /// Swift's own `Hasher`, so that instruction counts repeat exactly.
    var hash: UInt32 {
        var state = Self.seed ^ (UInt64(tag) &* 0x9E37_79B9_7F4A_7C15)
        switch tag {
        case CellTag.text, CellTag.blob:
            let count = bytes.count
            var offset = 0
            while offset + 8 <= count {
                state = Self.mix(state ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self), 0x9FB2_1C65_1E98_DF25)
                offset += 8
            }
            var tail: UInt64 = 0
            if offset < count, count >= 8 {
                // The last 8 bytes, overlapping words already mixed: one load, not a byte at a time.
                tail = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            } else {
                var shift: UInt64 = 0
                while offset < count {
                    tail |= UInt64(bytes[offset]) << shift
                    shift += 8
                    offset += 1
                }
            }
            state = Self.mix(state ^ tail, 0xD6E8_FEB8_6659_FD93 ^ UInt64(count))
        case CellTag.real:
            let real = Double(bitPattern: payload)
            state = Self.mix(state ^ (real == 0 ? 0 : payload), 0xD6E8_FEB8_6659_FD93)
        default:
            state = Self.mix(state ^ payload, 0xD6E8_FEB8_6659_FD93)
        }
        state = Self.mix(state, 0xFF51_AFD7_ED55_8CCD)
        return UInt32(truncatingIfNeeded: state ^ (state >> 32))
    }

    private static let seed: UInt64 = ProcessInfo.processInfo.environment["SWIFT_DETERMINISTIC_HASHING"] == nil
        ? UInt64.random(in: 1...UInt64.max) : 0x2545_F491_4F6C_DD1D

    /// Multiplies in full width and folds the halves: one round of the mixing wyhash uses.
    private static func mix(_ value: UInt64, _ constant: UInt64) -> UInt64 {
        let product = value.multipliedFullWidth(by: constant)
        return product.high ^ product.low
    }
}

extension Column {
    /// Calls `body` with each slot of `slots` and its cell's key probe, in order, until `body`
    /// returns false: the cells read a page at a time (``PagedArray/withPart(from:upTo:_:)``),
    /// as a block's every key is at a warm start.
    func forEachProbe(in slots: Range<Int>, arena: UnsafeRawBufferPointer, _ body: (Int, KeyProbe) -> Bool) {
        var start = slots.lowerBound
        while start < slots.upperBound {
            let end = Swift.min(slots.upperBound, (start | pagedArrayOffsetMask) + 1)
            let goOn = tags.withPart(from: start, upTo: end) { tags in
                payloads.withPart(from: start, upTo: end) { payloads in
                    lengths.withPart(from: start, upTo: end) { lengths in
                        for offset in 0..<tags.count {
                            let tag = tags[offset], payload = payloads[offset]
                            // The arena is one buffer here, so a probe may borrow its bytes past
                            // the closure `withProbe` scopes them to; the same slice as there.
                            let probe = tag >= CellTag.text
                                ? KeyProbe(tag: tag, payload: 0, bytes: UnsafeRawBufferPointer(
                                    rebasing: arena[Int(truncatingIfNeeded: payload)..<Int(truncatingIfNeeded: payload) + Int(lengths[offset])]))
                                : KeyProbe(tag: tag, payload: payload)
                            if !body(start + offset, probe) { return false }
                        }
                        return true
                    }
                }
            }
            guard goOn else { return }
            start = end
        }
    }

    /// Calls `body` with the key probe for the cell at `slot`, its bytes borrowed from `arena`.
    func withProbe<R>(at slot: Int, arena: some CellBytes, _ body: (KeyProbe) -> R) -> R {
        let tag = tags[slot], payload = payloads[slot]
        guard tag >= CellTag.text else { return body(KeyProbe(tag: tag, payload: payload)) }
        return arena.withCellBytes(payload, count: Int(lengths[slot])) { body(KeyProbe(tag: tag, payload: 0, bytes: $0)) }
    }

    /// Whether the cell at `slot` holds `probe`'s value.
    func holds(_ probe: KeyProbe, at slot: Int, arena: some CellBytes) -> Bool {
        let tag = tags[slot]
        guard tag == probe.tag else { return false }
        guard tag >= CellTag.text else { return probe.matches(tag: tag, payload: payloads[slot], bytes: UnsafeRawBufferPointer(start: nil, count: 0)) }
        return arena.withCellBytes(payloads[slot], count: Int(lengths[slot])) { probe.matches(tag: tag, payload: 0, bytes: $0) }
    }
}

extension KeyHash {
    /// The slot whose cell in `keys` (its text and blob bytes in `arena`) holds `probe`'s value,
    /// `hash` being the probe's hash: how a table or a block finds a key.
    func find(_ probe: KeyProbe, hash: UInt32, in keys: Column, arena: some CellBytes) -> Int? {
        find(hash) { keys.holds(probe, at: $0, arena: arena) }
    }
}
