import Foundation

/// Appends little-endian values and length-prefixed bytes to a growing buffer: the snapshot
/// header's encoding.
///
/// The buffer is a byte array, not `Data`: an append to `Data` goes through its inline,
/// slice and large representations each time, an append to an array is a store.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    /// The bytes written, as `Data` (a copy).
    var data: Data { Data(bytes) }

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ value: Double) { append(value.bitPattern) }

    /// An unsigned LEB128 varint.
    mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7F) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func append(bytes: some Collection<UInt8>) {
        appendVarint(UInt64(bytes.count))
        self.bytes.append(contentsOf: bytes)
    }

    mutating func append(_ string: String) { append(bytes: Array(string.utf8)) }

    mutating func appendRaw(_ bytes: Data) { self.bytes.append(contentsOf: bytes) }
}
