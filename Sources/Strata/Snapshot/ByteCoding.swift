import Foundation

/// Appends little-endian values and length-prefixed bytes to a growing buffer: the snapshot
/// header's encoding.
///
/// The buffer is a byte array, not `Data`: appending single bytes to `Data` costs a hundred
/// instructions or more each, which made encoding a snapshot value cost ~2,000 instructions.
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

/// Reads what ``ByteWriter`` wrote, never past the end: running out is a truncation error.
struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    private func need(_ count: Int) throws {
        guard count >= 0, count <= remaining else {
            throw StrataError(.invalidSnapshot, "snapshot is truncated at byte \(offset) (needed \(count) more)")
        }
    }

    mutating func read<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        try need(MemoryLayout<T>.size)
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + MemoryLayout<T>.size])) }
        offset += MemoryLayout<T>.size
        return T(littleEndian: value)
    }

    mutating func readDouble() throws -> Double { Double(bitPattern: try read(UInt64.self)) }

    /// A 64-bit count, size or offset, which must fit an `Int` (a larger one cannot describe
    /// anything in a file this process can map).
    mutating func readSize() throws -> Int {
        let value = try read(UInt64.self)
        guard let size = Int(exactly: value) else {
            throw StrataError(.invalidSnapshot, "snapshot holds a size of \(value) at byte \(offset - 8), beyond any file")
        }
        return size
    }

    mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            try need(1)
            let byte = bytes[offset]
            offset += 1
            guard shift < 64 else { throw StrataError(.invalidSnapshot, "malformed varint at byte \(offset)") }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    mutating func readBytes() throws -> UnsafeRawBufferPointer {
        let count = try readVarint()
        guard count <= UInt64(remaining) else {
            throw StrataError(.invalidSnapshot, "snapshot is truncated at byte \(offset) (a \(count)-byte field)")
        }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(count)])
        offset += Int(count)
        return slice
    }

    mutating func readString() throws -> String {
        let raw = try readBytes()
        let decoded: String?
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            decoded = String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self)
        } else {
            decoded = String(bytes: raw, encoding: .utf8)  // also nil for invalid UTF-8
        }
        guard let string = decoded else {
            throw StrataError(.invalidSnapshot, "invalid UTF-8 text at byte \(offset)")
        }
        return string
    }
}
