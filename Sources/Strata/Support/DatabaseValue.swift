import Foundation

/// One SQLite value: NULL, a 64-bit integer, a double, UTF-8 text or a blob.
///
/// Strata stores every attribute as one of these (see ``AttributeType`` for the mapping) and
/// compares them exactly as SQLite does, so a ``Filter`` gives the same answer in SQL and in memory.
public enum DatabaseValue: Sendable, Hashable, CustomStringConvertible {
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An IEEE 754 double.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob(Data)

    /// Whether the value is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// Equality as SQLite sees it: text byte for byte. (Swift's `String ==` equates canonically
    /// equivalent strings such as "\u{E9}" and "e\u{301}", which SQLite stores and compares as
    /// different values; keys and IN lists must not merge them.)
    public static func == (lhs: DatabaseValue, rhs: DatabaseValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.integer(let a), .integer(let b)): return a == b
        case (.real(let a), .real(let b)): return a == b
        // memcmp of the contiguous UTF-8 (compareText), not the views' iterators: keys are
        // compared on every dictionary hit, and the iterators decode the string a byte at a time.
        case (.text(let a), .text(let b)): return a.utf8.count == b.utf8.count && compareText(a, b) == 0
        case (.blob(let a), .blob(let b)): return a == b
        default: return false
        }
    }

    /// Hashes consistently with ``==(_:_:)``: text by its UTF-8 bytes.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .integer(let value): hasher.combine(1); hasher.combine(value)
        case .real(let value): hasher.combine(2); hasher.combine(value)
        case .text(let value):
            hasher.combine(3)
            var text = value
            text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        case .blob(let value): hasher.combine(4); hasher.combine(value)
        }
    }

    /// The value as an SQL literal: `NULL`, `42`, `1.5`, `'it''s'`, `x'0aff'`.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let value): return "x'" + value.map { String(format: "%02x", $0) }.joined() + "'"
        }
    }

    /// The value's storage class.
    var storageClass: StorageClass {
        switch self {
        case .null: return .null
        case .integer: return .integer
        case .real: return .real
        case .text: return .text
        case .blob: return .blob
        }
    }

    /// The value as a column whose numbers take `numbers` stores it (``NumberClass``): `1.0` in
    /// an INTEGER column is `1`, `1` in a REAL column is `1.0`, so values SQLite considers equal
    /// hash equal.
    func normalized(_ numbers: NumberClass) -> DatabaseValue {
        let number: (tag: UInt8, payload: UInt64)
        switch self {
        case .integer(let integer): number = (StorageClass.integer.rawValue, UInt64(bitPattern: integer))
        case .real(let real): number = (StorageClass.real.rawValue, real.bitPattern)
        default: return self
        }
        let stored = numbers.normalized(tag: number.tag, payload: number.payload)
        guard stored.tag != number.tag else { return self }
        return stored.tag == StorageClass.integer.rawValue ? .integer(Int64(bitPattern: stored.payload))
            : .real(Double(bitPattern: stored.payload))
    }

    /// Compares two values the way SQLite's BINARY collation does (`ORDER BY` semantics:
    /// NULL first, integers and reals by numeric value, text and blobs byte by byte; values of
    /// different classes by ``StorageClass/rank``). ``Column``'s `compare` is the same rule on
    /// cells.
    static func compare(_ lhs: DatabaseValue, _ rhs: DatabaseValue) -> Int {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.real(let a), .real(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.integer(let a), .real(let b)): return -compareReal(b, withInteger: a)
        case (.real(let a), .integer(let b)): return compareReal(a, withInteger: b)
        case (.text(let a), .text(let b)): return compareText(a, b)
        case (.blob(let a), .blob(let b)): return compareBytes(a, b)
        default: return lhs.storageClass.rank - rhs.storageClass.rank
        }
    }

    static func compareReal(_ real: Double, withInteger integer: Int64) -> Int {
        // Exact like SQLite (sqlite3IntFloatCompare): compare the integral part as an Int64, then
        // the fraction. Converting the integer to Double instead would round beyond 2^53.
        if real.isNaN { return -1 }
        if real < -9_223_372_036_854_775_808.0 { return -1 }
        if real >= 9_223_372_036_854_775_808.0 { return 1 }
        let whole = Int64(real)  // in range; truncated toward zero, so Double(whole) is exact
        if whole != integer { return whole < integer ? -1 : 1 }
        return real < Double(whole) ? -1 : (real > Double(whole) ? 1 : 0)
    }

    /// Byte-wise, like `compareBytes` over the UTF-8 views, but on the contiguous UTF-8 storage
    /// with `memcmp`: a sort by a text key compares many times, and the views' iterators go a
    /// byte at a time through the string's generic paths.
    private static func compareText(_ a: String, _ b: String) -> Int {
        var a = a, b = b
        return a.withUTF8 { left in
            b.withUTF8 { right in
                let common = min(left.count, right.count)
                if common > 0, let x = left.baseAddress, let y = right.baseAddress {
                    let order = memcmp(x, y, common)
                    if order != 0 { return order < 0 ? -1 : 1 }
                }
                return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
            }
        }
    }

    private static func compareBytes<C: Collection>(_ a: C, _ b: C) -> Int where C.Element == UInt8 {
        var left = a.makeIterator()
        var right = b.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x < y ? -1 : 1 }
            }
        }
    }
}

/// A Swift value that converts to and from a ``DatabaseValue``: the attribute types Strata stores
/// directly, usable as ``Filter`` operands and bulk-update values.
public protocol DatabaseValueConvertible: Sendable {
    /// The value as SQLite stores it.
    var databaseValue: DatabaseValue { get }
    /// Reads the value back, or returns nil when `databaseValue` does not hold this type.
    static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> Self?
}

extension DatabaseValue: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self }
    public static func fromDatabaseValue(_ databaseValue: DatabaseValue) -> DatabaseValue? { databaseValue }
}

extension Bool: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        if case .integer(let int) = value { return int != 0 }
        return nil
    }
}

extension String: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        if case .text(let text) = value { return text }
        return nil
    }
}

extension Double: DatabaseValueConvertible {
    /// Doubles are stored as REAL. SQLite writes an integral REAL as an integer on disk, so
    /// `-0.0` reads back as `+0.0` (equal, but with the sign lost); NaN cannot be stored.
    public var databaseValue: DatabaseValue { .real(self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .real(let real): return real
        case .integer(let int): return Double(int)
        default: return nil
        }
    }
}

extension Float: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(Double(self)) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Float? {
        Double.fromDatabaseValue(value).map(Float.init)
    }
}

extension Data: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .blob(self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        if case .blob(let data) = value { return data }
        return nil
    }
}

extension Date: DatabaseValueConvertible {
    /// Dates are stored as REAL seconds since 2001-01-01 00:00:00 UTC (Foundation's reference
    /// date), which round-trips every `Date` exactly and sorts chronologically.
    public var databaseValue: DatabaseValue { .real(timeIntervalSinceReferenceDate) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Date? {
        Double.fromDatabaseValue(value).map(Date.init(timeIntervalSinceReferenceDate:))
    }
}

extension UUID: DatabaseValueConvertible {
    /// UUIDs are stored as their canonical uppercase text, readable from the `sqlite3` shell.
    public var databaseValue: DatabaseValue { .text(uuidString) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> UUID? {
        if case .text(let text) = value { return UUID(uuidString: text) }
        return nil
    }
}

extension URL: DatabaseValueConvertible {
    /// URLs are stored as their absolute string.
    public var databaseValue: DatabaseValue { .text(absoluteString) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> URL? {
        if case .text(let text) = value { return URL(string: text) }
        return nil
    }
}

extension Decimal: DatabaseValueConvertible {
    /// Decimals are stored as exact text (`"12.50"` becomes `"12.5"`). Ordering comparisons on a
    /// Decimal attribute therefore compare text, in SQL and in memory alike.
    public var databaseValue: DatabaseValue { .text(description) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Decimal? {
        if case .text(let text) = value { return Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) }
        return nil
    }
}

extension BinaryInteger where Self: DatabaseValueConvertible {
    /// Integers are stored as SQLite's 64-bit INTEGER. A `UInt64` above `Int64.max` cannot be
    /// stored: saving one throws ``StrataError/Code/invalidValue``. As a filter operand it
    /// becomes a REAL, which orders correctly against every stored integer (and equals none);
    /// as a bulk-update value it is rejected.
    public var databaseValue: DatabaseValue {
        if let exact = Int64(exactly: self) { return .integer(exact) }
        return .real(Double(self))
    }
    /// The integer `value` holds, or nil when it holds no integer or one out of this type's range.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        if case .integer(let int) = value { return Self(exactly: int) }
        return nil
    }
}

extension Int: DatabaseValueConvertible {}
extension Int8: DatabaseValueConvertible {}
extension Int16: DatabaseValueConvertible {}
extension Int32: DatabaseValueConvertible {}
extension Int64: DatabaseValueConvertible {}
extension UInt: DatabaseValueConvertible {}
extension UInt8: DatabaseValueConvertible {}
extension UInt16: DatabaseValueConvertible {}
extension UInt32: DatabaseValueConvertible {}
extension UInt64: DatabaseValueConvertible {}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        return Wrapped.fromDatabaseValue(value).map { .some($0) }
    }
}

extension RawRepresentable where Self: DatabaseValueConvertible, RawValue: DatabaseValueConvertible {
    /// A `RawRepresentable` type stores its raw value.
    public var databaseValue: DatabaseValue { rawValue.databaseValue }
    /// The value whose raw value `value` holds, or nil when it holds none of the type's raw values.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        RawValue.fromDatabaseValue(value).flatMap(Self.init(rawValue:))
    }
}
