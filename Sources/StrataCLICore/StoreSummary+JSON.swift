import Strata

extension StoreSummary {
    /// What `strata inspect --json` prints.
    var json: JSONValue {
        .object([
            ("path", .string(path)),
            ("storeID", .string(storeID.uuidString)),
            ("schemaVersion", .int(schemaVersion)),
            ("format", .int(format)),
            ("createdAt", .optional(createdAt.map { .string(ValueFormatter.iso8601($0.timeIntervalSinceReferenceDate.rounded(.down))) })),
            ("generation", .int(changeLog.generation)),
            ("changeLog", .object([
                ("floor", .int(changeLog.floor)),
                ("oldest", .optional(changeLog.oldest.map { .int($0) })),
                ("newest", .optional(changeLog.newest.map { .int($0) })),
                ("entries", .int(changeLog.entries)),
            ])),
            ("files", .object([
                ("databaseBytes", .int(files.database)),
                ("walBytes", .optional(files.wal.map { .int($0) })),
                ("pageSize", .int(files.pageSize)),
                ("pages", .int(files.pageCount)),
                ("freePages", .int(files.freePages)),
            ])),
            ("entities", .array(entities.map(\.json))),
            ("migrations", .array(migrations.map { migration in
                .object([("name", .string(migration.name)), ("kind", .string(migration.kind == .named ? "migration" : "automatic")),
                         ("appliedAt", .string(ValueFormatter.iso8601(migration.appliedAt.timeIntervalSinceReferenceDate.rounded(.down))))])
            })),
        ])
    }
}

extension EntitySummary {
    var json: JSONValue {
        .object([
            ("name", .string(schema.name)),
            ("table", .string(schema.table)),
            ("rows", .optional(rowCount.map { .int($0) })),
            ("resident", .bool(schema.isResident)),
            ("primaryKey", .string(schema.primaryKey.name)),
            ("attributes", .array(schema.attributes.map { attribute in
                .object([("name", .string(attribute.name)), ("column", .string(attribute.column)),
                         ("type", .string(attribute.type.rawValue)), ("optional", .bool(attribute.isOptional))])
            })),
            ("fullText", .array(schema.fullTextAttributes.map { .string($0) })),
            ("fullTextTable", .optional(fullTextTable.map { .string($0) })),
            ("indexes", .array(indexes.map { index in
                .object([("name", .string(index.name)), ("columns", .array(index.columns.map { .string($0) })),
                         ("unique", .bool(index.isUnique)), ("origin", .string(index.origin.rawValue))])
            })),
        ])
    }
}
