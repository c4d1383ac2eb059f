import Foundation

/// Reads what ``ByteWriter`` wrote, never past the end. Each read names the field it reads, so
/// that a failure says what and where: running out is ``SnapshotRejection/truncated`` ("it
/// ends at byte 30, inside the generation (8 bytes at byte 24)"), a value no writer writes is
/// ``SnapshotRejection/undecodable``.
struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    private func need(_ count: Int, _ field: () -> String) throws(StrataError) {
        guard count >= 0, count <= remaining else {
            throw .snapshot(.truncated, "it ends at byte \(bytes.count), inside \(field()) (\(count) bytes at byte \(offset))")
        }
    }

    mutating func read<T: FixedWidthInteger>(_ type: T.Type, _ field: @autoclosure () -> String) throws(StrataError) -> T {
        try need(MemoryLayout<T>.size, field)
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + MemoryLayout<T>.size])) }
        offset += MemoryLayout<T>.size
        return T(littleEndian: value)
    }

    mutating func readDouble(_ field: @autoclosure () -> String) throws(StrataError) -> Double {
        Double(bitPattern: try read(UInt64.self, field()))
    }

    /// A 64-bit count, size or offset, which must fit an `Int` (a larger one cannot describe
    /// anything in a file this process can map).
    mutating func readSize(_ field: @autoclosure () -> String) throws(StrataError) -> Int {
        let value = try read(UInt64.self, field())
        guard let size = Int(exactly: value) else {
            throw .snapshot(.undecodable, "\(field()) is \(value) (at byte \(offset - 8)), beyond any file")
        }
        return size
    }

    mutating func readVarint(_ field: @autoclosure () -> String) throws(StrataError) -> UInt64 {
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            try need(1, field)
            let byte = bytes[offset]
            offset += 1
            guard shift < 64 else {
                throw .snapshot(.undecodable, "\(field()) is a varint longer than 64 bits (at byte \(start))")
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return result }
            shift += 7
        }
    }

    /// A varint length, then that many bytes.
    mutating func readBytes(_ field: @autoclosure () -> String) throws(StrataError) -> UnsafeRawBufferPointer {
        let count = try readVarint("the length of \(field())")
        guard count <= UInt64(remaining) else {
            throw .snapshot(.truncated, "it ends at byte \(bytes.count), inside \(field()) (\(count) bytes at byte \(offset))")
        }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(count)])
        offset += Int(count)
        return slice
    }

    /// A varint length, then that many bytes of UTF-8.
    mutating func readString(_ field: @autoclosure () -> String) throws(StrataError) -> String {
        let start = offset
        let raw = try readBytes(field())
        let decoded: String?
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            decoded = String(validating: raw.bindMemory(to: UInt8.self), as: UTF8.self)
        } else {
            decoded = String(bytes: raw, encoding: .utf8)  // also nil for invalid UTF-8
        }
        guard let string = decoded else {
            throw .snapshot(.undecodable, "\(field()) is not valid UTF-8 (\(raw.count) bytes after its length at byte \(start))")
        }
        return string
    }
}
