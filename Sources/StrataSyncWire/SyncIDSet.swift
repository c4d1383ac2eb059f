import Foundation

/// The objects one entry of a push or a pull is about. In JSON, an array of keys, or for
/// integer keys the compact form `{"deltas": "<base64>"}`: the keys sorted ascending, each the
/// LEB128 varint of its difference from the one before (the first from 0). Sixteen or more
/// non-negative integer keys are encoded compactly; both forms are always decoded.
public struct SyncIDSet: Sendable, Hashable, Codable {
    /// The keys, in the order given (ascending after a compact decode).
    public var keys: [SyncKey]

    /// The smallest set encoded compactly.
    public static let compactThreshold = 16

    /// A set of these keys.
    public init(_ keys: [SyncKey]) { self.keys = keys }

    private enum CodingKeys: String, CodingKey { case deltas }

    /// Decodes an array of keys or the compact form.
    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: CodingKeys.self) {
            let text = try container.decode(String.self, forKey: .deltas)
            guard let bytes = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(forKey: .deltas, in: container,
                                                       debugDescription: "the deltas are not base64")
            }
            do {
                keys = try Self.decodeDeltas(bytes).map(SyncKey.integer)
            } catch let problem as DeltaProblem {
                throw DecodingError.dataCorruptedError(forKey: .deltas, in: container, debugDescription: problem.message)
            }
        } else {
            keys = try [SyncKey](from: decoder)
        }
    }

    /// Encodes the compact form when every key is a non-negative integer and there are at
    /// least ``compactThreshold``; an array otherwise.
    public func encode(to encoder: any Encoder) throws {
        if keys.count >= Self.compactThreshold, let integers = nonNegativeIntegers {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(Self.encodeDeltas(integers.sorted()).base64EncodedString(), forKey: .deltas)
        } else {
            try keys.encode(to: encoder)
        }
    }

    private var nonNegativeIntegers: [Int64]? {
        var integers: [Int64] = []
        integers.reserveCapacity(keys.count)
        for key in keys {
            guard case .integer(let value) = key, value >= 0 else { return nil }
            integers.append(value)
        }
        return integers
    }

    struct DeltaProblem: Error { let message: String }

    static func encodeDeltas(_ sorted: [Int64]) -> Data {
        var bytes = Data()
        bytes.reserveCapacity(sorted.count * 2)
        var previous: Int64 = 0
        for value in sorted {
            var delta = UInt64(value - previous)
            previous = value
            while delta >= 0x80 {
                bytes.append(UInt8(delta & 0x7F) | 0x80)
                delta >>= 7
            }
            bytes.append(UInt8(delta))
        }
        return bytes
    }

    static func decodeDeltas(_ bytes: Data) throws -> [Int64] {
        var values: [Int64] = []
        var previous: Int64 = 0
        var delta: UInt64 = 0
        var shift: UInt64 = 0
        for (offset, byte) in bytes.enumerated() {
            guard shift < 63 || (shift == 63 && byte & 0x7E == 0) else {
                throw DeltaProblem(message: "the varint ending at byte \(offset) does not fit 64 bits")
            }
            delta |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 != 0 {
                shift += 7
                continue
            }
            guard delta <= UInt64(Int64.max), case let (sum, overflow) = previous.addingReportingOverflow(Int64(delta)),
                  !overflow else {
                throw DeltaProblem(message: "the key ending at byte \(offset) is beyond Int64.max")
            }
            values.append(sum)
            previous = sum
            delta = 0
            shift = 0
        }
        guard shift == 0 else { throw DeltaProblem(message: "the last varint is cut off") }
        return values
    }
}
