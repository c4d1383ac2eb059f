import Foundation

/// Decodes entities from rows whose columns are in schema order.
///
/// The entity's row codec (``Entity/init(row:)``) reads the row through a ``RowReader``; its
/// default comes back here and goes through `Decodable`. Flat attributes are read straight from
/// the source; a value that does not fit (wrong type, NULL in a non-optional, out of range) is a
/// ``StrataError`` naming the entity, attribute and object ID — never a trap. Confined to the
/// thread using it.
final class RowDecoder<Source: RowSource>: Decoder, RowReaderSource {
    let schema: EntitySchema
    private var cursor: AttributeCursor
    private var source: Source?
    private lazy var json = JSONDecoder()

    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(schema: EntitySchema) {
        self.schema = schema
        self.cursor = AttributeCursor(schema: schema)
    }

    func decode<E: Entity>(_ type: E.Type, from source: Source) throws -> E {
        self.source = source
        cursor.reset()
        defer { self.source = nil }
        var reader = RowReader(source: self)
        do {
            let entity = try E(row: &reader)
            guard reader.position == schema.attributes.count else {
                throw StrataError(.unsupportedAttribute, "\(schema.name).init(row:) read \(reader.position) of the schema's "
                                  + "\(schema.attributes.count) attributes: \(schema.attributes.map(\.name).joined(separator: ", "))")
            }
            return entity
        } catch let error as StrataError {
            throw error.with(entity: schema.name, objectID: objectID)
        } catch {
            throw StrataError(.typeMismatch, "cannot decode \(schema.name): \(error)", entity: schema.name,
                              objectID: objectID)
        }
    }

    private var objectID: String? {
        guard let source else { return nil }
        switch source.value(at: schema.primaryKeyIndex) {
        case .text(let text): return text
        case .integer(let int): return String(int)
        case let other: return other.description
        }
    }

    // MARK: RowReaderSource

    var attributeCount: Int { schema.attributes.count }

    func value(at position: Int) -> DatabaseValue { source!.value(at: position) }

    func mismatch(_ value: DatabaseValue, at position: Int, expected: String) -> StrataError {
        mismatch(value, position, expected: expected)
    }

    func readPastEnd() -> StrataError {
        StrataError(.unsupportedAttribute, "\(schema.name).init(row:) read more than the schema's "
                    + "\(schema.attributes.count) attributes", entity: schema.name)
    }

    func decodeJSON<T: Decodable>(_ type: T.Type, from value: DatabaseValue, at position: Int) throws -> T {
        guard case .text(let text) = value else { throw mismatch(value, position, expected: "JSON text") }
        do {
            return try json.decode(T.self, from: Data(text.utf8))
        } catch {
            throw StrataError(.typeMismatch, "\(schema.name).\(schema.attributes[position].name) holds JSON that does not "
                              + "decode as \(T.self)", entity: schema.name, attribute: schema.attributes[position].column)
        }
    }

    func decodeWithCodable<E: Entity>(_ type: E.Type) throws -> E { try E(from: self) }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowKeyedDecodingContainer<Key, Source>(decoder: self))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        throw StrataError(.unsupportedAttribute, "entity \(schema.name) must decode from a keyed container")
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer {
        throw StrataError(.unsupportedAttribute, "entity \(schema.name) must decode from a keyed container")
    }

    // MARK: Reading values

    func position(_ key: String) throws -> Int {
        guard let position = cursor.position(of: key) else {
            throw StrataError(.missingColumn, "\(schema.name) asked for '\(key)', which its schema does not have",
                              entity: schema.name, attribute: key)
        }
        return position
    }

    func value(_ key: String) throws -> (DatabaseValue, Int) {
        let position = try position(key)
        return (source!.value(at: position), position)
    }

    func isNull(_ key: String) throws -> Bool {
        try value(key).0.isNull
    }

    func mismatch(_ value: DatabaseValue, _ position: Int, expected: String) -> StrataError {
        let attribute = schema.attributes[position]
        if value.isNull {
            return StrataError(.unexpectedNull, "\(schema.name).\(attribute.name) is NULL but its type \(expected) is not optional",
                               entity: schema.name, attribute: attribute.column)
        }
        return StrataError(.typeMismatch, "\(schema.name).\(attribute.name) holds \(value), which is not a \(expected)",
                           entity: schema.name, attribute: attribute.column)
    }

    func integer<T: FixedWidthInteger>(_ key: String, as type: T.Type) throws -> T {
        let (value, position) = try value(key)
        guard case .integer(let int) = value else { throw mismatch(value, position, expected: "\(T.self)") }
        guard let result = T(exactly: int) else {
            throw StrataError(.typeMismatch, "\(int) does not fit \(T.self)", entity: schema.name,
                              attribute: schema.attributes[position].column)
        }
        return result
    }

    func real(_ key: String) throws -> Double {
        let (value, position) = try value(key)
        switch value {
        case .real(let real): return real
        case .integer(let int): return Double(int)
        default: throw mismatch(value, position, expected: "Double")
        }
    }

    func bool(_ key: String) throws -> Bool {
        let (value, position) = try value(key)
        guard case .integer(let int) = value else { throw mismatch(value, position, expected: "Bool") }
        return int != 0
    }

    func text(_ key: String) throws -> String {
        let (value, position) = try value(key)
        guard case .text(let text) = value else { throw mismatch(value, position, expected: "String") }
        return text
    }

    func decodeValue<T: Decodable>(_ type: T.Type, key: String) throws -> T {
        let (value, position) = try value(key)
        if schema.attributes[position].type == .json { return try decodeJSON(T.self, from: value, at: position) }
        if let convertible = T.self as? any DatabaseValueConvertible.Type {
            if let result = Self.read(convertible, from: value) as? T { return result }
            throw mismatch(value, position, expected: "\(T.self)")
        }
        if let raw = T.self as? any RawRepresentable.Type {
            if let result = Self.readRaw(raw, from: value) as? T { return result }
            throw mismatch(value, position, expected: "\(T.self)")
        }
        throw StrataError(.unsupportedAttribute, "cannot read a \(T.self) from a column", entity: schema.name,
                          attribute: key)
    }

    private static func read<C: DatabaseValueConvertible>(_ type: C.Type, from value: DatabaseValue) -> Any? {
        C.fromDatabaseValue(value)
    }

    private static func readRaw<R: RawRepresentable>(_ type: R.Type, from value: DatabaseValue) -> Any? {
        guard let rawType = R.RawValue.self as? any DatabaseValueConvertible.Type,
              let raw = read(rawType, from: value) as? R.RawValue else { return nil }
        return R(rawValue: raw)
    }
}

private struct RowKeyedDecodingContainer<Key: CodingKey, Source: RowSource>: KeyedDecodingContainerProtocol {
    let decoder: RowDecoder<Source>
    var codingPath: [CodingKey] { [] }
    var allKeys: [Key] { decoder.schema.attributes.compactMap { Key(stringValue: $0.name) } }

    func contains(_ key: Key) -> Bool { decoder.schema.position(of: key.stringValue) != nil }
    func decodeNil(forKey key: Key) throws -> Bool { try decoder.isNull(key.stringValue) }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder.bool(key.stringValue) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder.text(key.stringValue) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder.real(key.stringValue) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decoder.real(key.stringValue)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder.integer(key.stringValue, as: type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder.integer(key.stringValue, as: type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder.integer(key.stringValue, as: type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder.integer(key.stringValue, as: type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder.integer(key.stringValue, as: type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder.integer(key.stringValue, as: type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder.integer(key.stringValue, as: type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder.integer(key.stringValue, as: type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder.integer(key.stringValue, as: type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder.integer(key.stringValue, as: type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder.decodeValue(type, key: key.stringValue) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try decoder.isNull(key.stringValue) ? nil : decode(type, forKey: key)
    }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try decoder.isNull(key.stringValue) ? nil : decode(type, forKey: key)
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try decoder.isNull(key.stringValue) ? nil : decode(type, forKey: key)
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try decoder.isNull(key.stringValue) ? nil : decode(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try decoder.isNull(key.stringValue) ? nil : decode(type, forKey: key)
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try decoder.isNull(key.stringValue) ? nil : decode(type, forKey: key)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> {
        throw StrataError(.unsupportedAttribute, "nested containers are not supported", attribute: key.stringValue)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer {
        throw StrataError(.unsupportedAttribute, "nested containers are not supported", attribute: key.stringValue)
    }
    func superDecoder() throws -> Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> Decoder { decoder }
}
