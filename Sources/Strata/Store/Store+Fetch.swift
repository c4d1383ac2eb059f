import Foundation

extension Store {
    /// The objects matching `query`, in its order.
    ///
    /// Runs on the store's queue after every change set submitted before the call has been
    /// attempted, and overlays any that are still pending: read-your-writes, committed or not.
    ///
    /// Cancelling the calling task stops the fetch: skipped if it has not started, interrupted
    /// (SQLite progress-handler check) if it runs; it then throws `CancellationError`.
    /// - Throws: ``StrataError`` — `.unknownEntity`, `.unknownAttribute`, `.invalidValue` for a
    ///   bad query; `.typeMismatch` / `.unexpectedNull` for a row that does not fit the entity.
    public func fetch<E: Entity>(_ query: Query<E>) async throws -> [E] {
        let resolved = try ResolvedQuery(query, schema: registry.schema(for: E.self))
        return try await interruptibleOnQueue(prepare: { self.takeInOutsideCommits($0) }) { writer in try self.fetch(E.self, resolved, writer) }
    }

    /// The object with this ID, or nil.
    public func fetch<E: Entity>(_ type: E.Type, id: E.ID) async throws -> E? {
        try await fetch(type, ids: [id]).first
    }

    /// The objects with these IDs that exist, sorted by ID.
    public func fetch<E: Entity>(_ type: E.Type, ids: some Collection<E.ID>) async throws -> [E] {
        let schema = try registry.schema(for: E.self)
        let chunks = stride(from: 0, to: ids.count, by: 10_000).map { Array(ids.dropFirst($0).prefix(10_000)) }
        var result: [E] = []
        for chunk in chunks {
            let query = Query<E>(where: Attribute(schema.primaryKey.name).in(chunk))
            result += try await fetch(query)
        }
        return chunks.count > 1 ? result.sorted { $0.id < $1.id } : result
    }

    /// The number of objects matching `query` (its limit and offset apply). Cancellable like
    /// `fetch(_:)`.
    public func count<E: Entity>(_ query: Query<E>) async throws -> Int {
        let resolved = try ResolvedQuery(query, schema: registry.schema(for: E.self))
        return try await interruptibleOnQueue(prepare: { self.takeInOutsideCommits($0) }) { writer in
            if let rows = try self.overlaidRows(resolved, writer) { return rows.count }
            let (sql, arguments) = resolved.selectSQL(columns: "1")
            let count = try writer.rows(sql: "SELECT count(*) FROM (\(sql))", arguments: arguments).first?.first
            return Int.fromDatabaseValue(count ?? .null) ?? 0
        }
    }

    /// The IDs of the objects matching `query`, in its order. Cheap: no object is decoded.
    /// Cancellable like `fetch(_:)`.
    public func ids<E: Entity>(_ query: Query<E>) async throws -> [E.ID] {
        let resolved = try ResolvedQuery(query, schema: registry.schema(for: E.self))
        let key = resolved.schema.primaryKeyIndex
        let values = try await interruptibleOnQueue(prepare: { self.takeInOutsideCommits($0) }) { writer -> [DatabaseValue] in
            if let rows = try self.overlaidRows(resolved, writer) { return rows.map { $0[key] } }
            let (sql, arguments) = resolved.selectSQL(columns: resolved.schema.primaryKey.column.quotedIdentifier)
            return try writer.rows(sql: sql, arguments: arguments).map { $0[0] }
        }
        return try values.map { value in
            guard let id = E.ID.fromDatabaseValue(value) else {
                throw StrataError(.typeMismatch, "primary key \(value) is not a \(E.ID.self)", entity: E.entityName,
                                  attribute: resolved.schema.primaryKey.column)
            }
            return id
        }
    }

    /// Every ID of an entity, for keeping an ID set in memory and diffing it against a server's.
    public func allIDs<E: Entity>(_ type: E.Type) async throws -> Set<E.ID> {
        Set(try await ids(Query<E>()))
    }

    // MARK: On the queue

    func fetch<E: Entity>(_ type: E.Type, _ resolved: ResolvedQuery, _ writer: Writer,
                          pending: [PipelineState.Pending]? = nil) throws -> [E] {
        if let rows = try overlaidRows(resolved, writer, pending: pending) {
            let decoder = try writer.statements(for: E.entityName).rowDecoder
            return try rows.map { try decoder.decode(E.self, from: $0) }
        }
        let (sql, arguments) = resolved.selectSQL()
        return try writer.fetch(E.self, sql: sql, arguments: arguments)
    }

    /// The query's objects (pending change sets applied) as a checked block, in its order: rows
    /// go from the statement into cells, never into row arrays.
    func fetchBlock(_ resolved: ResolvedQuery, _ writer: Writer, pending: [PipelineState.Pending]? = nil) throws -> ColumnBlock {
        var block = ColumnBlock(schema: resolved.schema)
        if let rows = try overlaidRows(resolved, writer, pending: pending) {
            for row in rows { try block.append(row) }
            return block
        }
        let (sql, arguments) = resolved.selectSQL()
        return try Self.fill(block, from: writer.connection.prepare(sql), arguments)
    }

    /// The rows per batch of a fetch (``fill(_:from:_:)``).
    static let fetchBatchRows = 2_048

    /// `block` with the rows of `statement` appended, a ``CellBatch`` at a time. From the second
    /// batch on (when there is more than one core), the batches are appended to the block on a
    /// thread of its own (``HandOff``) while the statement steps on: the statement's thread only
    /// copies each row's cells into a batch, which stays in cache, and the block's growth (fresh
    /// pages, the key index, the arena's copies) runs beside it: appending cells and faulting in
    /// pages is work of the same order as SQLite's stepping, so two threads share it.
    static func fill(_ block: ColumnBlock, from statement: Statement, _ arguments: [DatabaseValue]) throws -> ColumnBlock {
        var block = block
        let schema = block.schema
        var batch = CellBatch(schema: schema, capacity: fetchBatchRows)
        var handOff: HandOff<CellBatch, ColumnBlock>?
        do {
            try statement.forEachRow(arguments) { row in
                try batch.append(row)
                guard batch.isFull else { return }
                if handOff == nil, Parallel.cores > 1 {
                    handOff = HandOff(state: block, spares: [CellBatch(schema: schema, capacity: fetchBatchRows),
                                                             CellBatch(schema: schema, capacity: fetchBatchRows)]) { block, batch in
                        try block.append(batch)
                    }
                    block = ColumnBlock(schema: schema)   // the consumer's now: not kept here as well
                }
                if let handOff {
                    batch = try handOff.pass(batch)
                } else {
                    try block.append(batch)
                }
            }
            if let handOff { return try handOff.finish(batch) }
            try block.append(batch)
            return block
        } catch {
            handOff?.cancel()
            throw error
        }
    }

    /// The query's rows with pending change sets applied, or nil when none is pending for the entity.
    func overlaidRows(_ resolved: ResolvedQuery, _ writer: Writer,
                      pending: [PipelineState.Pending]? = nil) throws -> [[DatabaseValue]]? {
        let pending = pending ?? pipeline.withLock { $0.pending }
        let overlay = PendingOverlay(schema: resolved.schema, pending: pending)
        if overlay.isEmpty { return nil }
        var sql = "SELECT \(resolved.selectList) FROM \(resolved.schema.table.quotedIdentifier)"
        var arguments: [DatabaseValue] = []
        if let (condition, conditionArguments) = overlay.widenedCondition(resolved.filter,
                                                                          variableLimit: writer.connection.maxVariableCount) {
            sql += " WHERE " + condition
            arguments = conditionArguments
        }
        let key = resolved.schema.primaryKeyIndex
        var rows: [DatabaseValue: [DatabaseValue]] = [:]
        for row in try writer.rows(sql: sql, arguments: arguments) { rows[row[key]] = row }
        try overlay.apply(to: &rows, encoder: writer.statements(for: resolved.schema.name).encoder)
        return resolved.evaluate(Array(rows.values))
    }
}
