import Foundation

/// The root store's connection and everything bound to it: per-entity statements, row encoders
/// and decoders. Confined to the store's queue (held in a ``QueueConfined``).
final class Writer {
    let connection: Connection
    let registry: SchemaRegistry
    private var entities: [String: EntityStatements] = [:]

    init(connection: Connection, registry: SchemaRegistry) {
        self.connection = connection
        self.registry = registry
    }

    /// Per-entity SQL, encoder and decoder, built on first use.
    final class EntityStatements {
        let schema: EntitySchema
        let encoder: RowEncoder
        let decoder: RowDecoder<Statement>
        let rowDecoder: RowDecoder<[DatabaseValue]>
        let insertSQL: String
        let upsertSQL: String
        let updateSQL: String
        let deleteSQL: String

        init(schema: EntitySchema) {
            self.schema = schema
            encoder = RowEncoder(schema: schema)
            decoder = RowDecoder(schema: schema)
            rowDecoder = RowDecoder(schema: schema)
            let table = schema.table.quotedIdentifier
            let columns = schema.attributes.map(\.column.quotedIdentifier)
            let key = schema.primaryKey.column.quotedIdentifier
            let others = columns.enumerated().filter { $0.offset != schema.primaryKeyIndex }.map(\.element)
            let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            insertSQL = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
            upsertSQL = insertSQL + " ON CONFLICT(\(key)) DO "
                + (others.isEmpty ? "NOTHING" : "UPDATE SET " + others.map { "\($0) = excluded.\($0)" }.joined(separator: ", "))
            updateSQL = "UPDATE \(table) SET " + (others.isEmpty ? "\(key) = \(key)" : others.map { "\($0) = ?" }.joined(separator: ", "))
                + " WHERE \(key) = ?"
            deleteSQL = "DELETE FROM \(table) WHERE \(key) = ?"
        }

        /// The update's arguments: every column but the key, then the key.
        func updateArguments(_ row: [DatabaseValue]) -> [DatabaseValue] {
            var arguments = row
            let key = arguments.remove(at: schema.primaryKeyIndex)
            arguments.append(key)
            return arguments
        }
    }

    func statements(for entity: String) throws -> EntityStatements {
        if let existing = entities[entity] { return existing }
        let created = EntityStatements(schema: try registry.schema(named: entity))
        entities[entity] = created
        return created
    }

    // MARK: Applying change sets

    func apply(_ changes: ChangeSet) throws {
        for operation in changes.operations {
            try apply(operation)
        }
    }

    private func apply(_ operation: ChangeSet.Operation) throws {
        let entity = try statements(for: operation.entityName)
        let schema = entity.schema
        switch operation {
        case .save(let object, let mode):
            let row = try entity.encoder.encode(object)
            do {
                switch mode {
                case .insert: try connection.prepare(entity.insertSQL).run(row)
                case .upsert: try connection.prepare(entity.upsertSQL).run(row)
                case .update:
                    try connection.prepare(entity.updateSQL).run(entity.updateArguments(row))
                    if connection.changes == 0 {
                        throw StrataError(.objectNotFound, "cannot update \(schema.name) \(object.id): it is not in the store",
                                          entity: schema.name, objectID: "\(object.id)")
                    }
                }
            } catch let error as StrataError {
                throw error.with(entity: schema.name, objectID: "\(object.id)")
            }
        case .delete(_, let id):
            try connection.prepare(entity.deleteSQL).run([id])
        case .bulkUpdate(_, let target, let assignments):
            let set = assignments.map { schema.attributes[schema.position(of: $0.attribute)!].column.quotedIdentifier + " = ?" }
                .joined(separator: ", ")
            try runBulk("UPDATE \(schema.table.quotedIdentifier) SET \(set)", assignments.map(\.value), target, schema)
        case .bulkDelete(_, let target):
            try runBulk("DELETE FROM \(schema.table.quotedIdentifier)", [], target, schema)
        }
    }

    private func runBulk(_ prefix: String, _ leading: [DatabaseValue], _ target: ChangeSet.BulkTarget,
                         _ schema: EntitySchema) throws {
        switch target {
        case .filter(let filter):
            let (condition, arguments) = try ResolvedFilter(filter, schema: schema).sql()
            try connection.prepare(prefix + " WHERE " + condition, cached: false).run(leading + arguments)
        case .ids(let ids):
            let chunk = max(1, connection.maxVariableCount - leading.count)
            var start = ids.startIndex
            while start < ids.endIndex {
                let end = min(start + chunk, ids.endIndex)
                let sql = prefix + " WHERE \(schema.primaryKey.column.quotedIdentifier) IN ("
                    + Array(repeating: "?", count: end - start).joined(separator: ",") + ")"
                try connection.prepare(sql, cached: false).run(leading + ids[start..<end])
                start = end
            }
        }
    }

    // MARK: Reading

    /// Runs a SELECT of the entity's columns and decodes each row.
    func fetch<E: Entity>(_ type: E.Type, sql: String, arguments: [DatabaseValue]) throws -> [E] {
        let entity = try statements(for: E.entityName)
        let statement = try connection.prepare(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        var result: [E] = []
        while try statement.step() {
            result.append(try entity.decoder.decode(E.self, from: statement))
        }
        return result
    }

    /// Runs a SELECT of the entity's columns and returns raw rows.
    func rows(sql: String, arguments: [DatabaseValue]) throws -> [[DatabaseValue]] {
        try connection.prepare(sql).rows(arguments)
    }
}
