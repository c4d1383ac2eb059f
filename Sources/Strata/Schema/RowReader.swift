import Foundation

/// Where an entity's row codec reads an object's attribute values: the fast path of
/// ``Entity/init(row:)``.
///
/// A hand-written (or generated) codec reads every attribute once, in the entity's schema order
/// — the order ``RowWriter`` writes them in:
///
/// ```swift
/// extension Article {
///     init(row: inout RowReader) throws {
///         id = try row.read()
///         feedID = try row.read()
///         title = try row.read()
///         summary = try row.read()        // String?: nil for NULL
///         published = try row.read()
///         isRead = try row.read()
///     }
/// }
/// ```
///
/// A value that does not fit (another type, NULL for a non-optional, an integer out of range)
/// throws a ``StrataError`` naming the entity, attribute and object; so does reading more or
/// fewer attributes than the schema has. The methods are inlinable and the type is frozen, so
/// the codec compiles to straight-line code in the app's module.
@frozen
public struct RowReader {
    @usableFromInline let source: any RowReaderSource
    @usableFromInline var position = 0

    init(source: any RowReaderSource) {
        self.source = source
    }

    /// Reads the next attribute's value.
    @inlinable
    public mutating func read<Value: DatabaseValueConvertible>(_ type: Value.Type = Value.self) throws -> Value {
        let value = try next()
        if let result = Value.fromDatabaseValue(value) { return result }
        throw source.mismatch(value, at: position - 1, expected: "\(Value.self)")
    }

    /// Reads the next attribute as a `RawRepresentable` type (an enum) that does not conform to
    /// ``DatabaseValueConvertible`` itself, from its stored raw value.
    @inlinable
    public mutating func readRawValue<Value: RawRepresentable>(_ type: Value.Type = Value.self) throws -> Value
        where Value.RawValue: DatabaseValueConvertible {
        let value = try next()
        if let raw = Value.RawValue.fromDatabaseValue(value), let result = Value(rawValue: raw) { return result }
        throw source.mismatch(value, at: position - 1, expected: "\(Value.self)")
    }

    /// Reads the next attribute as an optional `RawRepresentable` type: nil for NULL.
    @inlinable
    public mutating func readRawValue<Value: RawRepresentable>(_ type: Value?.Type) throws -> Value?
        where Value.RawValue: DatabaseValueConvertible {
        if source.value(at: position).isNull {
            position += 1
            return nil
        }
        return try readRawValue(Value.self)
    }

    /// Reads the next attribute from its JSON text (the storage of nested `Codable` values).
    public mutating func readJSON<Value: Decodable>(_ type: Value.Type = Value.self) throws -> Value {
        let value = try next()
        return try source.decodeJSON(Value.self, from: value, at: position - 1)
    }

    /// Reads the next attribute from its JSON text: nil for NULL.
    public mutating func readJSON<Value: Decodable>(_ type: Value?.Type) throws -> Value? {
        let value = try next()
        return value.isNull ? nil : try source.decodeJSON(Value.self, from: value, at: position - 1)
    }

    /// The next attribute's stored value.
    @usableFromInline
    mutating func next() throws -> DatabaseValue {
        guard position < source.attributeCount else { throw source.readPastEnd() }
        defer { position += 1 }
        return source.value(at: position)
    }

    /// The default ``Entity/init(row:)``: the whole row through `Decodable`.
    mutating func decodeWithCodable<E: Entity>(_ type: E.Type) throws -> E {
        position = source.attributeCount
        return try source.decodeWithCodable(E.self)
    }
}

/// What a ``RowReader`` reads from: a row decoder positioned on one row.
@usableFromInline
protocol RowReaderSource: AnyObject {
    var attributeCount: Int { get }
    func value(at position: Int) -> DatabaseValue
    func mismatch(_ value: DatabaseValue, at position: Int, expected: String) -> StrataError
    func readPastEnd() -> StrataError
    func decodeJSON<T: Decodable>(_ type: T.Type, from value: DatabaseValue, at position: Int) throws -> T
    func decodeWithCodable<E: Entity>(_ type: E.Type) throws -> E
}

extension Entity {
    /// Reads an object through its `Decodable` conformance. Implement ``init(row:)`` by hand
    /// (with ``encode(row:)``) to skip `Codable` on Strata's hot paths.
    public init(row: inout RowReader) throws {
        self = try row.decodeWithCodable(Self.self)
    }
}
