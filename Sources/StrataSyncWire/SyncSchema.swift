/// The type of an attribute, as a space's schema records it.
public enum SyncAttributeType: String, Sendable, Hashable, Codable, CaseIterable {
    /// Int64 (Swift integers and Booleans).
    case integer
    /// Double.
    case real
    /// UTF-8 text.
    case text
    /// Bytes.
    case blob
}

/// The entities a device syncs and their attributes: sent with `PUT /v1/schema`; the server
/// keeps one per space and checks every push against it.
///
/// ```json
/// {"entities": {"Article": {"keyType": "integer",
///                           "attributes": {"title": {"type": "text", "optional": false}}}}}
/// ```
public struct SyncSchema: Sendable, Hashable, Codable {
    /// One entity: its key's type and its attributes other than the key.
    public struct Entity: Sendable, Hashable, Codable {
        /// `integer` or `text`.
        public var keyType: SyncAttributeType
        /// The attributes other than the primary key, by name.
        public var attributes: [String: Attribute]

        /// An entity with these attributes.
        public init(keyType: SyncAttributeType, attributes: [String: Attribute]) {
            self.keyType = keyType
            self.attributes = attributes
        }
    }

    /// One attribute's type, and whether it may be null.
    public struct Attribute: Sendable, Hashable, Codable {
        /// The stored type.
        public var type: SyncAttributeType
        /// Whether null is a value it may hold.
        public var optional: Bool

        /// An attribute of `type`.
        public init(type: SyncAttributeType, optional: Bool) {
            self.type = type
            self.optional = optional
        }
    }

    /// The entities by name.
    public var entities: [String: Entity]

    /// A schema of these entities.
    public init(entities: [String: Entity]) { self.entities = entities }

    /// This schema with `other`'s entities and attributes added: the merge a server makes when
    /// a device sends its schema.
    /// - Throws: ``SyncProtocolError`` (`schemaMismatch`) naming the first entity or attribute
    ///   whose key type, type or optionality differs.
    public func merging(_ other: SyncSchema) throws -> SyncSchema {
        var merged = self
        for (name, entity) in other.entities.sorted(by: { $0.key < $1.key }) {
            guard let known = merged.entities[name] else {
                merged.entities[name] = entity
                continue
            }
            guard known.keyType == entity.keyType else {
                throw SyncProtocolError(.schemaMismatch,
                    "entity \(name): key type \(entity.keyType.rawValue) here, \(known.keyType.rawValue) in the space's schema")
            }
            for (attributeName, attribute) in entity.attributes.sorted(by: { $0.key < $1.key }) {
                if let existing = known.attributes[attributeName], existing != attribute {
                    throw SyncProtocolError(.schemaMismatch,
                        "\(name).\(attributeName): \(attribute.description) here, \(existing.description) in the space's schema")
                }
                merged.entities[name]?.attributes[attributeName] = attribute
            }
        }
        return merged
    }
}

extension SyncSchema.Attribute: CustomStringConvertible {
    /// `text` or `optional text`.
    public var description: String { optional ? "optional \(type.rawValue)" : type.rawValue }
}
