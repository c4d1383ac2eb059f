import Foundation

/// Encodes an entity into a row: one ``DatabaseValue`` per attribute, in schema order.
///
/// The entity's row codec (``Entity/encode(row:)``) writes the row; its default comes back here
/// and goes through `Encodable`: flat attributes go straight into the row through the `Encoder`
/// protocol; only attributes of type ``AttributeType/json`` are serialized with `JSONEncoder`.
/// One encoder is reused for many rows of one entity and is confined to the thread using it.
final class RowEncoder: Encoder, RowWriterSink {
    let schema: EntitySchema
    private var cursor: AttributeCursor
    fileprivate var values: [DatabaseValue]
    fileprivate var failure: StrataError?
    private lazy var json: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    var attributeCount: Int { schema.attributes.count }
    var codingPath: [CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(schema: EntitySchema) {
        self.schema = schema
        self.cursor = AttributeCursor(schema: schema)
        self.values = Array(repeating: .null, count: schema.attributes.count)
    }

    /// The row for `entity`, written by its row codec.
    func encode<E: Entity>(_ entity: E) throws -> [DatabaseValue] {
        var writer = RowWriter(sink: self)
        do {
            try entity.encode(row: &writer)
        } catch let error as StrataError {
            throw error.with(entity: schema.name, objectID: "\(entity.id)")
        }
        guard writer.values.count == schema.attributes.count else {
            throw StrataError(.unsupportedAttribute, "\(schema.name).encode(row:) wrote \(writer.values.count) values; "
                              + "the schema has \(schema.attributes.count): \(schema.attributes.map(\.name).joined(separator: ", "))",
                              entity: schema.name, objectID: "\(entity.id)")
        }
        return writer.values
    }

    /// The row for `entity` through `Encodable`. Attributes it does not encode (nil optionals) are NULL.
    func encodeWithCodable(_ entity: some Entity) throws -> [DatabaseValue] {
        for index in values.indices { values[index] = .null }
        cursor.reset()
        failure = nil
        do {
            try entity.encode(to: self)
        } catch let error as StrataError {
            throw error.with(entity: schema.name, objectID: "\(entity.id)")
        } catch {
            throw StrataError(.invalidValue, "cannot encode \(schema.name): \(error)", entity: schema.name,
                              objectID: "\(entity.id)")
        }
        if let failure { throw failure.with(entity: schema.name, objectID: "\(entity.id)") }
        return values
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RowKeyedEncodingContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> UnkeyedEncodingContainer {
        failure = StrataError(.unsupportedAttribute, "entity \(schema.name) must encode as a keyed container")
        return JSONEncoder.Discarding()
    }

    func singleValueContainer() -> SingleValueEncodingContainer {
        failure = StrataError(.unsupportedAttribute, "entity \(schema.name) must encode as a keyed container")
        return JSONEncoder.Discarding()
    }

    fileprivate func set(_ value: DatabaseValue, for key: String) throws {
        guard let position = cursor.position(of: key) else {
            throw StrataError(.unknownAttribute, "\(schema.name) encoded key '\(key)' that its schema does not have",
                              entity: schema.name, attribute: key)
        }
        values[position] = value
    }

    fileprivate func set<T: Encodable>(_ value: T, for key: String) throws {
        guard let position = cursor.position(of: key) else {
            throw StrataError(.unknownAttribute, "\(schema.name) encoded key '\(key)' that its schema does not have",
                              entity: schema.name, attribute: key)
        }
        values[position] = try databaseValue(for: value, type: schema.attributes[position].type, key: key)
    }

    private func databaseValue<T: Encodable>(for value: T, type: AttributeType, key: String) throws -> DatabaseValue {
        if type == .json {
            do {
                return .text(String(decoding: try json.encode(value), as: UTF8.self))
            } catch {
                throw StrataError(.invalidValue, "\(schema.name).\(key) cannot be encoded as JSON: \(error)",
                                  entity: schema.name, attribute: key)
            }
        }
        if let convertible = value as? any DatabaseValueConvertible {
            return try Self.checked(convertible.databaseValue, value: value, key: key)
        }
        if let raw = value as? any RawRepresentable, let convertible = raw.rawValue as? any DatabaseValueConvertible {
            return try Self.checked(convertible.databaseValue, value: convertible, key: key)
        }
        throw StrataError(.unsupportedAttribute, "cannot store a value of type \(T.self)", attribute: key)
    }

    // MARK: Checks for row codecs

    /// Checks that `value`, written by a row codec at `position`, is what the attribute there
    /// stores: its storage class, NULL only when optional, no NaN.
    func check(_ value: DatabaseValue, at position: Int) throws {
        guard position < schema.attributes.count else {
            throw StrataError(.unsupportedAttribute, "\(schema.name).encode(row:) wrote more than the schema's "
                              + "\(schema.attributes.count) attributes", entity: schema.name)
        }
        let attribute = schema.attributes[position]
        let fits: Bool
        switch (attribute.type.sqlType, value) {
        case (_, .null): fits = attribute.isOptional
        case ("INTEGER", .integer), ("TEXT", .text), ("BLOB", .blob): fits = true
        case ("REAL", .real(let real)): fits = !real.isNaN
        default: fits = false
        }
        guard fits else {
            let what = value.isNull ? "NULL, but it is not optional"
                : "\(value), which does not fit its \(attribute.type) storage (\(attribute.type.sqlType))"
            throw StrataError(.typeMismatch, "\(schema.name).encode(row:) wrote \(attribute.name) (attribute \(position + 1) "
                              + "of \(schema.attributes.count)) as \(what); write the attributes in schema order: "
                              + schema.attributes.map(\.name).joined(separator: ", "),
                              entity: schema.name, attribute: attribute.name)
        }
    }

    /// `value` as the JSON text an attribute at `position` stores.
    func jsonText<T: Encodable>(_ value: T, at position: Int) throws -> DatabaseValue {
        let key = position < schema.attributes.count ? schema.attributes[position].name : "#\(position + 1)"
        do {
            return .text(String(decoding: try json.encode(value), as: UTF8.self))
        } catch {
            throw StrataError(.invalidValue, "\(schema.name).\(key) cannot be encoded as JSON: \(error)",
                              entity: schema.name, attribute: key)
        }
    }

    static func checked(_ stored: DatabaseValue, value: Any, key: String) throws -> DatabaseValue {
        if case .real(let real) = stored, real.isNaN {
            throw StrataError(.invalidValue, "NaN cannot be stored (SQLite turns it into NULL)", attribute: key)
        }
        if let unsigned = value as? UInt64, unsigned > UInt64(Int64.max) {
            throw StrataError(.invalidValue, "\(unsigned) does not fit SQLite's 64-bit signed INTEGER", attribute: key)
        }
        if let unsigned = value as? UInt, UInt64(unsigned) > UInt64(Int64.max) {
            throw StrataError(.invalidValue, "\(unsigned) does not fit SQLite's 64-bit signed INTEGER", attribute: key)
        }
        return stored
    }
}

private struct RowKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoder
    var codingPath: [CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { try encoder.set(.null, for: key.stringValue) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try encoder.set(.integer(value ? 1 : 0), for: key.stringValue) }
    mutating func encode(_ value: String, forKey key: Key) throws { try encoder.set(.text(value), for: key.stringValue) }
    mutating func encode(_ value: Double, forKey key: Key) throws {
        try encoder.set(RowEncoder.checked(.real(value), value: value, key: key.stringValue), for: key.stringValue)
    }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        try encoder.set(RowEncoder.checked(.real(Double(value)), value: value, key: key.stringValue), for: key.stringValue)
    }
    mutating func encode(_ value: Int, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try encoder.set(.integer(value), for: key.stringValue) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try encoder.set(.integer(Int64(value)), for: key.stringValue) }
    mutating func encode(_ value: UInt, forKey key: Key) throws {
        try encoder.set(RowEncoder.checked(value.databaseValue, value: value, key: key.stringValue), for: key.stringValue)
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        try encoder.set(RowEncoder.checked(value.databaseValue, value: value, key: key.stringValue), for: key.stringValue)
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try encoder.set(value, for: key.stringValue) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey> {
        encoder.failure = StrataError(.unsupportedAttribute, "nested containers are not supported", attribute: key.stringValue)
        return KeyedEncodingContainer(RowKeyedEncodingContainer<NestedKey>(encoder: encoder))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer {
        encoder.failure = StrataError(.unsupportedAttribute, "nested containers are not supported", attribute: key.stringValue)
        return JSONEncoder.Discarding()
    }
    mutating func superEncoder() -> Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> Encoder { encoder }
}

extension JSONEncoder {
    /// A container that drops what it is given; returned where an error was already recorded.
    struct Discarding: UnkeyedEncodingContainer, SingleValueEncodingContainer {
        var codingPath: [CodingKey] { [] }
        var count: Int { 0 }
        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {}
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(DiscardingKeyed<NestedKey>())
        }
        mutating func nestedUnkeyedContainer() -> UnkeyedEncodingContainer { self }
        mutating func superEncoder() -> Encoder { DiscardingEncoder() }
    }

    struct DiscardingKeyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        var codingPath: [CodingKey] { [] }
        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
            -> KeyedEncodingContainer<NestedKey> { KeyedEncodingContainer(DiscardingKeyed<NestedKey>()) }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> UnkeyedEncodingContainer { Discarding() }
        mutating func superEncoder() -> Encoder { DiscardingEncoder() }
        mutating func superEncoder(forKey key: Key) -> Encoder { DiscardingEncoder() }
    }

    struct DiscardingEncoder: Encoder {
        var codingPath: [CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(DiscardingKeyed<Key>())
        }
        func unkeyedContainer() -> UnkeyedEncodingContainer { Discarding() }
        func singleValueContainer() -> SingleValueEncodingContainer { Discarding() }
    }
}
