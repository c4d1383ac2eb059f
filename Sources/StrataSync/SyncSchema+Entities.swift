import Strata
import StrataSyncWire

extension SyncSchema {
    /// The schema a device sends for `schemas` (the store's, of the entities it syncs): each
    /// attribute by its stored type, the primary key aside.
    init(_ schemas: [EntitySchema]) {
        var entities: [String: Entity] = [:]
        for schema in schemas {
            var attributes: [String: Attribute] = [:]
            for (position, attribute) in schema.attributes.enumerated() where position != schema.primaryKeyIndex {
                attributes[attribute.name] = Attribute(type: SyncAttributeType(attribute.type), optional: attribute.isOptional)
            }
            entities[schema.name] = Entity(keyType: SyncAttributeType(schema.primaryKey.type), attributes: attributes)
        }
        self.init(entities: entities)
    }
}

extension SyncAttributeType {
    /// The protocol's type of a Strata attribute: its column's storage class.
    init(_ type: AttributeType) {
        switch type {
        case .bool, .integer: self = .integer
        case .real, .date: self = .real
        case .text, .uuid, .url, .decimal, .json: self = .text
        case .data: self = .blob
        }
    }
}

extension SyncValue {
    /// A stored value as the protocol carries it.
    init(_ value: DatabaseValue) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .real(let real): self = .real(real)
        case .text(let text): self = .text(text)
        case .blob(let data): self = .blob(data)
        }
    }

    /// The value to store for an attribute of `attribute`'s type, or nil when the JSON kind does
    /// not fit it (``resolved(as:optional:)``).
    func databaseValue(for attribute: AttributeSchema) -> DatabaseValue? {
        switch resolved(as: SyncAttributeType(attribute.type), optional: attribute.isOptional) {
        case .none: return nil
        case .null: return .null
        case .integer(let integer): return .integer(integer)
        case .real(let real): return .real(real)
        case .text(let text): return .text(text)
        case .blob(let data): return .blob(data)
        }
    }
}

extension SyncKey {
    /// A stored primary key as the protocol carries it; nil for a key that is neither an integer
    /// nor text.
    init?(_ value: DatabaseValue) {
        switch value {
        case .integer(let integer): self = .integer(integer)
        case .text(let text): self = .text(text)
        default: return nil
        }
    }

    /// The key as stored.
    var databaseValue: DatabaseValue {
        switch self {
        case .integer(let integer): .integer(integer)
        case .text(let text): .text(text)
        }
    }
}
