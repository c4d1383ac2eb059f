/// The entities a store was opened with, by type and by name. Immutable after open.
struct SchemaRegistry: Sendable {
    let schemas: [EntitySchema]
    private let byName: [String: EntitySchema]
    /// The registered types, in registration order.
    let types: [EntityType]

    /// An entity metatype that can cross isolation domains.
    ///
    /// `@unchecked Sendable` is safe because a metatype is immutable, process-global type
    /// metadata: sharing it between threads shares no mutable state.
    struct EntityType: @unchecked Sendable {
        let type: any Entity.Type
    }

    init(_ types: [any Entity.Type]) throws {
        var schemas: [EntitySchema] = []
        for type in types {
            let schema = try SchemaReflector.schema(for: type)
            if schemas.contains(where: { $0.name == schema.name || $0.table == schema.table }) {
                throw StrataError(.unsupportedAttribute, "two entities share the name or table \(schema.name)",
                                  entity: schema.name)
            }
            schemas.append(schema)
        }
        self.schemas = schemas
        self.types = types.map(EntityType.init)
        self.byName = Dictionary(uniqueKeysWithValues: schemas.map { ($0.name, $0) })
    }

    func schema(named name: String) throws -> EntitySchema {
        guard let schema = byName[name] else {
            throw StrataError(.unknownEntity, "entity \(name) was not registered with the store "
                              + "(registered: \(schemas.map(\.name).joined(separator: ", ")))", entity: name)
        }
        return schema
    }

    func schema<E: Entity>(for type: E.Type) throws -> EntitySchema { try schema(named: E.entityName) }

    /// The type registered under `name` (which is registered).
    func type(named name: String) -> any Entity.Type {
        types[schemas.firstIndex { $0.name == name }!].type
    }
}
