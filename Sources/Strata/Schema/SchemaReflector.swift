import Foundation

/// Reads an entity's attributes from its `Decodable` conformance.
///
/// It decodes one instance from a decoder that answers every request with a placeholder value
/// and records, for each top-level key, the type asked for and whether it was optional. This is
/// the same sequence of calls the row decoder will see, so the schema matches the decoder exactly.
enum SchemaReflector {
    static func schema<E: Entity>(for type: E.Type) throws -> EntitySchema {
        let entity = E.entityName
        let recorder = AttributeRecorder()
        do {
            _ = try E(from: PlaceholderDecoder(recorder: recorder, entity: entity))
        } catch let error as StrataError {
            throw error
        } catch {
            throw StrataError(.unsupportedAttribute,
                "cannot read the attributes of \(entity): its Decodable initializer rejected placeholder values (\(error))",
                entity: entity)
        }
        var attributes: [AttributeSchema] = []
        for (name, type, optional) in recorder.attributes {
            let column = E.columnNames[name] ?? name
            let defaultValue = optional ? DatabaseValue.null : (E.attributeDefaults[name] ?? type.zeroValue)
            attributes.append(AttributeSchema(name: name, column: column, type: type, isOptional: optional,
                                              defaultValue: defaultValue))
        }
        guard let keyIndex = attributes.firstIndex(where: { $0.name == "id" }) ?? attributes.firstIndex(where: {
            $0.name == "id" || $0.column == (E.columnNames["id"] ?? "id") }) else {
            throw StrataError(.unsupportedAttribute,
                "entity \(entity) does not encode its `id` under the coding key \"id\"", entity: entity, attribute: "id")
        }
        if attributes[keyIndex].isOptional {
            throw StrataError(.unsupportedAttribute, "the primary key of \(entity) cannot be optional",
                              entity: entity, attribute: "id")
        }
        let schema = EntitySchema(name: entity, table: E.tableName, attributes: attributes, primaryKeyIndex: keyIndex,
                                  indexes: E.indexes, fullTextAttributes: E.fullTextAttributes,
                                  isResident: E.residency == .resident,
                                  archiveVersion: E.archiveVersion)
        try validate(schema, columnNames: E.columnNames, defaults: E.attributeDefaults)
        var declared = schema
        declared.evolution = EntitySchema.Evolution(formerNames: E.formerAttributeNames, discarded: E.discardedAttributes,
                                                    explicitDefaults: Set(E.attributeDefaults.keys))
        for key in E.snapshotOrder { _ = try schema.requirePosition(of: key.attribute) }
        declared.snapshotOrder = E.snapshotOrder
        declared.residency = E.residency
        declared.deferredAttributes = try deferredAttributes(E.deferredAttributes, of: declared)
        return declared
    }

    /// `names` (``Entity/deferredAttributes``) in schema order, checked: each an attribute
    /// stored as TEXT or BLOB, not the primary key, not in an index or the snapshot order (the
    /// main context's in-memory indexes read those at launch).
    /// - Throws: ``StrataError/Code/unknownAttribute`` or ``StrataError/Code/unsupportedAttribute``
    ///   naming the attribute and why.
    static func deferredAttributes(_ names: [String], of schema: EntitySchema) throws -> [String] {
        let ordered = Set(schema.snapshotOrder.map(\.attribute)), indexed = Set(schema.indexes.flatMap(\.attributes))
        var positions: [Int] = []
        for name in names {
            let position = try schema.requirePosition(of: name)
            let attribute = schema.attributes[position]
            func refuse(_ reason: String) -> StrataError {
                StrataError(.unsupportedAttribute, "deferred attribute \(name) of \(schema.name) \(reason)",
                            entity: schema.name, attribute: name)
            }
            if position == schema.primaryKeyIndex { throw refuse("is the primary key, which a load indexes") }
            if attribute.type.admits(.integer) || attribute.type.admits(.real) {
                throw refuse("is stored as a number (\(attribute.type.rawValue)); only TEXT and BLOB values can be deferred")
            }
            if indexed.contains(name) { throw refuse("is part of an index, which a load builds from every value") }
            if ordered.contains(name) { throw refuse("is part of the snapshot order, which a load builds from every value") }
            if positions.contains(position) { throw refuse("is listed twice") }
            positions.append(position)
        }
        return positions.sorted().map { schema.attributes[$0].name }
    }

    private static func validate(_ schema: EntitySchema, columnNames: [String: String], defaults: [String: DatabaseValue]) throws {
        let named = Set(columnNames.keys).union(defaults.keys).union(schema.indexes.flatMap(\.attributes))
        for attribute in named.sorted() { _ = try schema.requirePosition(of: attribute) }
        for attribute in schema.fullTextAttributes {
            let type = schema.attributes[try schema.requirePosition(of: attribute)].type
            guard type == .text else {
                throw StrataError(.unsupportedAttribute, "full-text attribute \(attribute) must be a String, not \(type)",
                                  entity: schema.name, attribute: attribute)
            }
        }
        let columns = schema.attributes.map { $0.column.lowercased() }
        if Set(columns).count != columns.count {
            throw StrataError(.unsupportedAttribute, "two attributes of \(schema.name) map to the same column",
                              entity: schema.name)
        }
    }

    /// The attribute type for a value type, and whether it is stored through its raw value.
    static func attributeType(of type: Any.Type) -> AttributeType? {
        switch type {
        case is Bool.Type: return .bool
        case is String.Type: return .text
        case is Double.Type, is Float.Type: return .real
        case is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type,
             is UInt.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type: return .integer
        case is Date.Type: return .date
        case is UUID.Type: return .uuid
        case is Data.Type: return .data
        case is URL.Type: return .url
        case is Decimal.Type: return .decimal
        default:
            if let raw = type as? any RawRepresentable.Type { return rawAttributeType(raw) }
            return nil
        }
    }

    private static func rawAttributeType<R: RawRepresentable>(_ type: R.Type) -> AttributeType? {
        switch attributeType(of: R.RawValue.self) {
        case .bool?: return .bool
        case .integer?: return .integer
        case .real?: return .real
        case .text?: return .text
        default: return nil
        }
    }
}

/// The attributes seen so far, in first-seen order.
final class AttributeRecorder {
    private(set) var attributes: [(String, AttributeType, Bool)] = []
    private var seen: Set<String> = []

    func record(_ name: String, _ type: AttributeType, optional: Bool) {
        if seen.insert(name).inserted { attributes.append((name, type, optional)) }
    }
}

/// Answers every decoding request with a placeholder; at the top level it records what was asked.
struct PlaceholderDecoder: Decoder {
    let recorder: AttributeRecorder?
    let entity: String
    var codingPath: [CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(PlaceholderKeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> UnkeyedDecodingContainer {
        if recorder != nil { throw notKeyed() }
        return PlaceholderUnkeyedContainer(codingPath: codingPath)
    }

    func singleValueContainer() throws -> SingleValueDecodingContainer {
        if recorder != nil { throw notKeyed() }
        return PlaceholderSingleValueContainer(decoder: self)
    }

    private func notKeyed() -> StrataError {
        StrataError(.unsupportedAttribute, "entity \(entity) must encode as a keyed container (a struct with properties)",
                    entity: entity)
    }

    /// A placeholder value of `type`, with the attribute type to record for it.
    func placeholder<T: Decodable>(_ type: T.Type, key: String) throws -> (T, AttributeType) {
        if let attributeType = SchemaReflector.attributeType(of: type) {
            if let value = Placeholders.simple(type) { return (value, attributeType) }
            if let iterable = type as? any CaseIterable.Type, let value = Placeholders.firstCase(of: iterable) as? T {
                return (value, attributeType)
            }
            do {
                return (try T(from: PlaceholderDecoder(recorder: nil, entity: entity, codingPath: codingPath)), attributeType)
            } catch {
                throw StrataError(.unsupportedAttribute,
                    "attribute \(key) of \(entity) has type \(T.self), a RawRepresentable that is not CaseIterable: "
                    + "add CaseIterable so Strata can read the schema", entity: entity, attribute: key)
            }
        }
        do {
            return (try T(from: PlaceholderDecoder(recorder: nil, entity: entity, codingPath: codingPath)), .json)
        } catch {
            throw StrataError(.unsupportedAttribute,
                "attribute \(key) of \(entity) has type \(T.self), which Strata cannot store: its Decodable "
                + "initializer rejected placeholder values (\(error))", entity: entity, attribute: key)
        }
    }
}

enum Placeholders {
    static func simple<T>(_ type: T.Type) -> T? {
        let value: Any?
        switch type {
        case is Bool.Type: value = false
        case is String.Type: value = ""
        case is Double.Type: value = 0.0
        case is Float.Type: value = Float(0)
        case is Int.Type: value = 0
        case is Int8.Type: value = Int8(0)
        case is Int16.Type: value = Int16(0)
        case is Int32.Type: value = Int32(0)
        case is Int64.Type: value = Int64(0)
        case is UInt.Type: value = UInt(0)
        case is UInt8.Type: value = UInt8(0)
        case is UInt16.Type: value = UInt16(0)
        case is UInt32.Type: value = UInt32(0)
        case is UInt64.Type: value = UInt64(0)
        case is Date.Type: value = Date(timeIntervalSinceReferenceDate: 0)
        case is UUID.Type: value = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        case is Data.Type: value = Data()
        case is URL.Type: value = URL(string: "about:blank")
        case is Decimal.Type: value = Decimal.zero
        default: value = nil
        }
        return value as? T
    }

    static func firstCase<C: CaseIterable>(of type: C.Type) -> Any? { type.allCases.first }
}

private struct PlaceholderKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: PlaceholderDecoder
    var codingPath: [CodingKey] { decoder.codingPath }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool { false }

    private func value<T: Decodable>(_ type: T.Type, _ key: Key, optional: Bool) throws -> T {
        let (value, attributeType) = try decoder.placeholder(type, key: key.stringValue)
        decoder.recorder?.record(key.stringValue, attributeType, optional: optional)
        return value
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try value(type, key, optional: false) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(type, key, optional: false) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(type, key, optional: false) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(type, key, optional: false) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(type, key, optional: false) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(type, key, optional: false) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(type, key, optional: false) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(type, key, optional: false) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(type, key, optional: false) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(type, key, optional: false) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(type, key, optional: false) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(type, key, optional: false) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(type, key, optional: false) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(type, key, optional: false) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(type, key, optional: false) }

    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        let (_, attributeType) = try decoder.placeholder(type, key: key.stringValue)
        decoder.recorder?.record(key.stringValue, attributeType, optional: true)
        return nil
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey> {
        throw nested(key)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> UnkeyedDecodingContainer { throw nested(key) }
    func superDecoder() throws -> Decoder { throw nested(nil) }
    func superDecoder(forKey key: Key) throws -> Decoder { throw nested(key) }

    private func nested(_ key: Key?) -> Error {
        if decoder.recorder == nil {
            return DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "placeholder"))
        }
        return StrataError(.unsupportedAttribute,
            "entity \(decoder.entity) uses nested containers or superDecoder; store nested values as Codable properties",
            entity: decoder.entity, attribute: key?.stringValue)
    }
}

private struct PlaceholderUnkeyedContainer: UnkeyedDecodingContainer {
    var codingPath: [CodingKey]
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    private func end() -> DecodingError {
        DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "placeholder array is empty"))
    }
    mutating func decodeNil() throws -> Bool { throw end() }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey> { throw end() }
    mutating func nestedUnkeyedContainer() throws -> UnkeyedDecodingContainer { throw end() }
    mutating func superDecoder() throws -> Decoder { throw end() }
}

private struct PlaceholderSingleValueContainer: SingleValueDecodingContainer {
    let decoder: PlaceholderDecoder
    var codingPath: [CodingKey] { decoder.codingPath }
    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.placeholder(type, key: "value").0 }
}
