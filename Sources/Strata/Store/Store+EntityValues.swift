extension Store {
    /// The registered entity type named `entity` (``Entity/entityName``).
    /// - Throws: `.unknownEntity` when no registered entity has that name.
    @_spi(Sync)
    public func entityType(named entity: String) throws -> any Entity.Type {
        _ = try registry.schema(named: entity)
        return registry.type(named: entity)
    }

    /// An object of the entity named `entity` made from attribute values by name, through the
    /// entity's row codec (``Entity/init(row:)``, by default its `Decodable` conformance), as if
    /// its row had been read from the file: how a sync turns a server's record into an object.
    /// An attribute `values` does not name takes the value a migration gives the rows that
    /// exist when it is added: NULL when optional, else its ``Entity/attributeDefaults`` entry,
    /// else its type's zero (`0`, `""`, …).
    ///
    /// ```swift
    /// let article = try store.makeObject(entity: "Article", id: .integer(42),
    ///                                    values: ["title": .text("Hello"), "isRead": .integer(0)])
    /// var changes = ChangeSet()
    /// changes.upsert(article)
    /// ```
    /// - Parameters:
    ///   - entity: The entity's name.
    ///   - id: The primary key, as stored.
    ///   - values: Attribute values as stored, by attribute name (the primary key's is ignored).
    /// - Throws: `.unknownEntity` for a name no registered entity has; `.unknownAttribute` for a
    ///   name the entity lacks; the row codec's error (`.unexpectedNull`, `.typeMismatch`), naming
    ///   the entity, attribute and ID, for values that do not make an object.
    @_spi(Sync)
    public func makeObject(entity: String, id: DatabaseValue, values: [String: DatabaseValue]) throws -> any Entity {
        let schema = try registry.schema(named: entity)
        for name in values.keys { _ = try schema.requirePosition(of: name) }
        let row = schema.attributes.enumerated().map { position, attribute in
            position == schema.primaryKeyIndex ? id : values[attribute.name] ?? attribute.defaultValue
        }
        func decode<E: Entity>(_ type: E.Type) throws -> E {
            try RowDecoder<[DatabaseValue]>(schema: schema).decode(E.self, from: row)
        }
        return try decode(registry.type(named: entity))
    }

    /// The committed values of `attributes` of the objects of `entity` whose primary keys are in
    /// `ids`, by key; an ID the file does not hold is absent from the result. How a sync reads
    /// what to send for the objects its history names.
    ///
    /// ```swift
    /// let stored = try await store.attributeValues(of: "Article", ids: [.integer(42)], attributes: ["isRead"])
    /// let isRead = stored[.integer(42)]?["isRead"]
    /// ```
    ///
    /// Reads the file on the store's queue (`SELECT key, columns … WHERE key IN (…)`, in chunks of
    /// the connection's variable limit) after taking in other writers' commits; change sets
    /// accepted and not yet committed are not seen (``persist()`` first to see them).
    /// - Parameter attributes: Attribute names; nil for every attribute. The primary key is not
    ///   listed in the values.
    /// - Throws: `.unknownEntity`, `.unknownAttribute` naming it; `.closed` after ``close()``.
    @_spi(Sync)
    public func attributeValues(of entity: String, ids: [DatabaseValue],
                                attributes: [String]? = nil) async throws -> [DatabaseValue: [String: DatabaseValue]] {
        let schema = try registry.schema(named: entity)
        let names = try (attributes ?? schema.attributes.map(\.name)).filter { name in
            try schema.requirePosition(of: name) != schema.primaryKeyIndex
        }
        let columns = ([schema.primaryKey] + names.map { schema.attributes[schema.position(of: $0)!] })
            .map(\.column.quotedIdentifier).joined(separator: ", ")
        let key = schema.primaryKey.column.quotedIdentifier, table = schema.table.quotedIdentifier
        return try await onQueue { writer in
            self.takeInOutsideCommits(writer)
            var found: [DatabaseValue: [String: DatabaseValue]] = [:]
            let chunk = max(1, writer.variableLimit)
            var start = ids.startIndex
            while start < ids.endIndex {
                let end = min(start + chunk, ids.endIndex)
                let sql = "SELECT \(columns) FROM \(table) WHERE \(key) IN ("
                    + Array(repeating: "?", count: end - start).joined(separator: ",") + ")"
                for row in try writer.connection.prepare(sql, cached: false).rows(Array(ids[start..<end])) {
                    found[row[0]] = Dictionary(uniqueKeysWithValues: zip(names, row.dropFirst()))
                }
                start = end
            }
            return found
        }
    }
}

extension Store {
    /// A stream with one element per change set the store accepts from now on — every context's
    /// save, every ``submit(_:)``, what other writers committed once taken in — carrying the
    /// author its history transaction will record (nil for other writers' commits and change
    /// sets without one). How a sync engine learns, without polling, that there is something
    /// to push, and skips its own writes. Elements arrive in acceptance order, before the change
    /// set is committed (``persist()`` to wait for it); a slow reader keeps the newest 1,024.
    ///
    /// ```swift
    /// for await author in store.acceptedChangeAuthors() where author != "sync" {
    ///     schedulePush()
    /// }
    /// ```
    /// The stream ends when its task is cancelled; the store keeps no reference to it after that.
    @_spi(Sync)
    public func acceptedChangeAuthors() -> AsyncStream<String?> {
        let (stream, continuation) = AsyncStream<String?>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let (id, _) = addAcceptObserver { event in
            // Called under the pipeline lock: it only enqueues.
            if case .accepted(_, let changes) = event {
                continuation.yield(changes.transactionAuthor ?? changes.author?.name)
            }
        }
        continuation.onTermination = { [weak self] _ in self?.removeAcceptObserver(id) }
        return stream
    }
}
