import Foundation

/// Where an entity's row codec writes an object's attribute values: the fast path of
/// ``Entity/encode(row:)``.
///
/// A hand-written (or generated) codec writes every attribute once, in the entity's schema
/// order — the order of its coding keys, which for synthesized `Codable` is the order the stored
/// properties are declared in — each with the same storage `Codable` gives it
/// (``DatabaseValueConvertible``):
///
/// ```swift
/// extension Article {
///     func encode(row: inout RowWriter) throws {
///         try row.write(id)
///         try row.write(feedID)
///         try row.write(title)
///         try row.write(summary)          // String?: NULL when nil
///         try row.write(published)
///         try row.write(isRead)
///     }
/// }
/// ```
///
/// Strata checks each value against the attribute it lands in (storage class, optionality) and
/// the count at the end, so a codec that drifts from the schema fails with a clear
/// ``StrataError`` instead of storing a wrong row. The methods are inlinable and the type is
/// frozen, so the codec compiles to straight-line code in the app's module.
@frozen
public struct RowWriter {
    @usableFromInline let sink: any RowWriterSink
    @usableFromInline var values: [DatabaseValue]

    init(sink: any RowWriterSink) {
        self.sink = sink
        self.values = []
        values.reserveCapacity(sink.attributeCount)
    }

    /// Writes the next attribute's value.
    @inlinable
    public mutating func write<Value: DatabaseValueConvertible>(_ value: Value) throws {
        try append(value.databaseValue)
    }

    /// Writes the next attribute's value from a `RawRepresentable` type (an enum) that does not
    /// conform to ``DatabaseValueConvertible`` itself: its raw value is stored.
    @inlinable
    public mutating func writeRawValue<Value: RawRepresentable>(_ value: Value?) throws
        where Value.RawValue: DatabaseValueConvertible {
        try append(value?.rawValue.databaseValue ?? .null)
    }

    /// Writes the next attribute's value as JSON text (the storage of nested `Codable` values).
    public mutating func writeJSON<Value: Encodable>(_ value: Value?) throws {
        guard let value else { return try append(.null) }
        try append(try sink.jsonText(value, at: values.count))
    }

    /// Appends a value after checking it fits the attribute at its position.
    @usableFromInline
    mutating func append(_ value: DatabaseValue) throws {
        try sink.check(value, at: values.count)
        values.append(value)
    }

    /// The default ``Entity/encode(row:)``: the whole row through `Encodable`.
    mutating func encodeWithCodable<E: Entity>(_ entity: E) throws {
        values = try sink.encodeWithCodable(entity)
    }
}

/// What a ``RowWriter`` writes for: a row encoder, which checks each value against the schema.
@usableFromInline
protocol RowWriterSink: AnyObject {
    var attributeCount: Int { get }
    func check(_ value: DatabaseValue, at position: Int) throws
    func jsonText<T: Encodable>(_ value: T, at position: Int) throws -> DatabaseValue
    func encodeWithCodable<E: Entity>(_ entity: E) throws -> [DatabaseValue]
}

extension Entity {
    /// Writes the object's attribute values through its `Encodable` conformance. Implement
    /// ``encode(row:)`` by hand (with ``init(row:)``) to skip `Codable` on Strata's hot paths.
    public func encode(row: inout RowWriter) throws {
        try row.encodeWithCodable(self)
    }
}
