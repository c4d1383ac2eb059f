import Foundation

/// The root store's connection and everything bound to it: per-entity statements, row encoders
/// and decoders. Confined to the store's queue (held in a ``QueueConfined``).
final class Writer {
    let connection: Connection
    let registry: SchemaRegistry
    /// The most values one statement on the writer's connection binds: how a caller above the
    /// store (a context re-reading objects by key) sizes its `IN` lists.
    var variableLimit: Int { connection.maxVariableCount }
    private var entities: [String: EntityStatements] = [:]
    /// The same, by the metatype of a saved object: its entity name is not computed per object.
    private var entitiesByType: [ObjectIdentifier: EntityStatements] = [:]
    /// How the change sets being applied are kept out of the log triggers' reach; nil outside
    /// ``applyingOwnChanges(_:_:)`` (see `Writer+Triggers`).
    var ownChangesMode: OwnChangesMode?
    /// The tables whose writes fire a trigger other than the change log's, as of a schema version
    /// (`PRAGMA schema_version`) (see `Writer+Triggers`).
    var otherTriggerTables: (schemaVersion: Int64, tables: Set<String>)?

    /// The identity of the database file the connection opened (nil for a database not on
    /// disk): the store checks that its path still names it before every use (`Store.withOpenWriter`).
    let fileIdentity: FileIdentity?
    /// `PRAGMA data_version` when the store last looked for outside commits
    /// (`Store.takeInOutsideCommits`): while it is unchanged, no other connection committed.
    var lastDataVersion: Int64?

    init(connection: Connection, registry: SchemaRegistry, fileIdentity: FileIdentity? = nil) {
        self.connection = connection
        self.registry = registry
        self.fileIdentity = fileIdentity
    }

    /// Per-entity SQL, encoder and decoder, built on first use.
    final class EntityStatements {
        let schema: EntitySchema
        /// The entity's code in the change log (its `strata_entities` rowid).
        let code: Int64
        let encoder: RowEncoder
        let decoder: RowDecoder<Statement>
        let rowDecoder: RowDecoder<[DatabaseValue]>
        let insertSQL: String
        let upsertSQL: String
        let updateSQL: String
        let deleteSQL: String

        init(schema: EntitySchema, code: Int64) {
            self.schema = schema
            self.code = code
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

        /// Changed-attribute lists as the log stores them, by the bit mask of their positions
        /// (`Writer+ChangedAttributes`): built once per set of attributes, not per object.
        var attributeLists: [UInt64: String] = [:]

        /// The prepared insert, upsert and update, held here once prepared: a save binds them for
        /// every object, and finding them in the connection's cache hashes the SQL each time.
        private var prepared: [Statement?] = [nil, nil, nil]

        func statement(_ mode: ChangeSet.SaveMode, on connection: Connection) throws -> Statement {
            let index = mode == .insert ? 0 : (mode == .upsert ? 1 : 2)
            if let statement = prepared[index] { return statement }
            let statement = try connection.prepare(index == 0 ? insertSQL : (index == 1 ? upsertSQL : updateSQL))
            prepared[index] = statement
            return statement
        }

        /// The update's arguments: every column but the key, then the key.
        func updateArguments(_ row: [DatabaseValue]) -> [DatabaseValue] {
            var arguments = row
            let key = arguments.remove(at: schema.primaryKeyIndex)
            arguments.append(key)
            return arguments
        }
    }

    /// Lets go of every statement the writer holds, then closes the connection (a statement
    /// still held would keep the file open: `sqlite3_close_v2` waits for its finalization).
    func close() {
        entities = [:]
        entitiesByType = [:]
        connection.close()
    }

    func statements(for entity: String) throws -> EntityStatements {
        if let existing = entities[entity] { return existing }
        let code = Int64.fromDatabaseValue(try connection.rows("SELECT rowid FROM \(SchemaMigrator.entitiesTable) WHERE name = ?",
                                                               [.text(entity)]).first?.first ?? .null)
        guard let code else {
            throw StrataError(.corrupt, "entity \(entity) is not recorded in \(SchemaMigrator.entitiesTable)", path: connection.path)
        }
        let created = EntityStatements(schema: try registry.schema(named: entity), code: code)
        entities[entity] = created
        return created
    }

    /// The statements of an operation's entity; for a save, found by the object's type.
    func statements(for operation: ChangeSet.Operation) throws -> EntityStatements {
        guard case .save(let save) = operation else { return try statements(for: operation.entityName) }
        let type = ObjectIdentifier(Swift.type(of: save.object))
        if let known = entitiesByType[type] { return known }
        let entity = try statements(for: operation.entityName)
        entitiesByType[type] = entity
        return entity
    }

    // MARK: Applying change sets

    /// Applies a change set and logs it (inside the caller's savepoint, so a failing change set
    /// leaves no entry): one log entry per run of same-kind operations, and one history
    /// transaction, authored by the change set's ``ChangeSet/transactionAuthor`` or its context's
    /// name, committed at `date` (seconds since 1970); then its stored values (``StoredValues``). Only inside ``applyingOwnChanges(_:_:)``,
    /// which keeps the log triggers from logging the same rows.
    ///
    /// `outside` are the keys, by entity, that someone outside the store wrote after this change
    /// set's context read them: a save or deletion of one of them made by a context is resolved
    /// by its merge policy (``OutsideConflict``) instead of overwriting the outside change.
    /// - Throws: ``OutsideConflictFailure`` when the policy is ``MergePolicy/reportConflict`` and
    ///   such an object is written.
    func apply(_ changes: ChangeSet, outside: [String: Set<DatabaseValue>] = [:],
               at date: Double = Date().timeIntervalSince1970) throws {
        guard let mode = ownChangesMode else {
            throw StrataError(.misuse, "the writer applied a change set outside applyingOwnChanges: "
                              + "the change-log triggers would log it a second time", path: connection.path)
        }
        // Triggers on: the log triggers logged each row; their entries go, and the writer's
        // entries take the same generations (the log's rowid is max + 1).
        let start = mode == .triggerEntriesRemoved ? try ChangeLog.generation(connection) : nil
        var log = ChangeLog.Batch()
        var conflicts: [String: [DatabaseValue]] = [:]
        for operation in changes.operations {
            if let policy = changes.policy, let keys = outside[operation.entityName] {
                let entity = try statements(for: operation)
                if let key = OutsideConflict.key(of: operation, keyPosition: entity.schema.primaryKeyIndex), keys.contains(key) {
                    if try !resolve(operation, key: key, entity, policy: policy, log: &log) {
                        conflicts[entity.schema.name, default: []].append(key)
                    }
                    continue
                }
            }
            try apply(operation, log: &log)
        }
        if !conflicts.isEmpty {
            let listed = conflicts.sorted { $0.key < $1.key }
                .map { entity, keys in "\(entity) " + keys.map(\.description).joined(separator: ", ") }.joined(separator: "; ")
            throw OutsideConflictFailure(
                error: StrataError(.conflict, "saved edits conflict with changes committed outside the store after they "
                                   + "were read (merge policy reportConflict): \(listed)", path: connection.path,
                                   entity: conflicts.count == 1 ? conflicts.keys.first : nil,
                                   objectID: conflicts.values.flatMap { $0 }.map(\.description).sorted().joined(separator: ",")),
                keys: conflicts)
        }
        if let start { try connection.execute("DELETE FROM \(ChangeLog.table) WHERE generation > ?", [.integer(start)]) }
        try log.write(connection, author: changes.transactionAuthor ?? changes.author?.name, at: date)
        // In the same savepoint: the values are committed with the rows, or neither is.
        try StoredValues.write(changes.storedValueWrites.map { ($0.key, $0.value) }, connection)
    }

    private func apply(_ operation: ChangeSet.Operation, log: inout ChangeLog.Batch) throws {
        let entity = try statements(for: operation)
        // A save reads the schema through `entity`: a copy of it retained each of its arrays and
        // strings for every object saved.
        switch operation {
        case .save(let save):
            let row = try save.row ?? entity.encoder.encode(save.object)
            let key = row[entity.schema.primaryKeyIndex]
            do {
                switch save.mode {
                case .insert:
                    try entity.statement(.insert, on: connection).run(row)
                    log.append(code: entity.code, op: ChangeLog.insert, key: key)
                case .upsert:
                    // An upsert that updates leaves the last inserted rowid alone: reset, it tells which.
                    connection.lastInsertedRowID = 0
                    try entity.statement(.upsert, on: connection).run(row)
                    if connection.changes > 0 {
                        let inserted = connection.lastInsertedRowID != 0
                        log.append(code: entity.code, op: inserted ? ChangeLog.insert : ChangeLog.update, key: key,
                                   attributes: inserted ? nil : entity.changedAttributes(row, base: save.baseRow))
                    }
                case .update:
                    try entity.statement(.update, on: connection).run(entity.updateArguments(row))
                    if connection.changes == 0 {
                        let name = entity.schema.name
                        throw StrataError(.objectNotFound, "cannot update \(name) \(save.object.id): it is not in the store",
                                          entity: name, objectID: "\(save.object.id)")
                    }
                    log.append(code: entity.code, op: ChangeLog.update, key: key,
                               attributes: entity.changedAttributes(row, base: save.baseRow))
                }
            } catch let error as StrataError {
                throw error.with(entity: entity.schema.name, objectID: "\(save.object.id)")
            }
        case .delete(_, let id):
            // Idempotent: deleting an object that is not stored leaves it not stored, as asked
            // (unlike an update, whose values would be lost), so nothing fails.
            try connection.prepare(entity.deleteSQL).run([id])
            if connection.changes > 0 { log.append(code: entity.code, op: ChangeLog.delete, key: id) }
        case .bulkUpdate(_, let target, let assignments):
            let schema = entity.schema
            let set = assignments.map { schema.attributes[schema.position(of: $0.attribute)!].column.quotedIdentifier + " = ?" }
                .joined(separator: ", ")
            let keys = try runBulk("UPDATE \(schema.table.quotedIdentifier) SET \(set)", assignments.map(\.value), target, schema)
            log.append(code: entity.code, op: ChangeLog.update, keys: keys,
                       attributes: entity.attributeList(assignments.compactMap { schema.position(of: $0.attribute) }))
        case .bulkDelete(_, let target):
            let schema = entity.schema
            let keys = try runBulk("DELETE FROM \(schema.table.quotedIdentifier)", [], target, schema)
            log.append(code: entity.code, op: ChangeLog.delete, keys: keys)
        }
    }

    /// Writes a save or deletion of `key`, which someone outside the store changed after the
    /// context read it, as `policy` resolves it; false when the policy leaves it to the app.
    private func resolve(_ operation: ChangeSet.Operation, key: DatabaseValue, _ entity: EntityStatements,
                         policy: MergePolicy, log: inout ChangeLog.Batch) throws -> Bool {
        let schema = entity.schema
        let columns = schema.attributes.map(\.column.quotedIdentifier).joined(separator: ", ")
        let stored = try connection.rows("SELECT \(columns) FROM \(schema.table.quotedIdentifier) WHERE "
                                         + "\(schema.primaryKey.column.quotedIdentifier) = ?", [key]).first
        switch OutsideConflict.resolve(operation, stored: stored, policy: policy) {
        case .write(let row):
            try entity.statement(.upsert, on: connection).run(row)
            log.append(code: entity.code, op: stored == nil ? ChangeLog.insert : ChangeLog.update, key: key,
                       attributes: stored.map { entity.changedAttributes(row, base: $0) })
        case .delete:
            try connection.prepare(entity.deleteSQL).run([key])
            if connection.changes > 0 { log.append(code: entity.code, op: ChangeLog.delete, key: key) }
        case .keep:
            break
        case .fail:
            return false
        }
        return true
    }

    /// Runs a bulk statement and returns the keys of the rows it changed (`RETURNING`), in order.
    private func runBulk(_ prefix: String, _ leading: [DatabaseValue], _ target: ChangeSet.BulkTarget,
                         _ schema: EntitySchema) throws -> [DatabaseValue] {
        let returning = " RETURNING \(schema.primaryKey.column.quotedIdentifier)"
        switch target {
        case .filter(let filter):
            let (condition, arguments) = try ResolvedFilter(filter, schema: schema).sql()
            return try connection.prepare(prefix + " WHERE " + condition + returning, cached: false)
                .rows(leading + arguments).map { $0[0] }
        case .ids(let ids):
            var keys: [DatabaseValue] = []
            let chunk = max(1, connection.maxVariableCount - leading.count)
            var start = ids.startIndex
            while start < ids.endIndex {
                let end = min(start + chunk, ids.endIndex)
                let sql = prefix + " WHERE \(schema.primaryKey.column.quotedIdentifier) IN ("
                    + Array(repeating: "?", count: end - start).joined(separator: ",") + ")" + returning
                keys += try connection.prepare(sql, cached: false).rows(leading + ids[start..<end]).map { $0[0] }
                start = end
            }
            return keys
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
