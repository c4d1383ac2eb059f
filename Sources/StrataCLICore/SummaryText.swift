import Strata

/// The text `strata inspect` prints.
enum SummaryText {
    static func lines(_ summary: StoreSummary) -> [String] {
        var lines: [String] = []
        func field(_ name: String, _ value: String) { lines.append(name.padding(toLength: 12, withPad: " ", startingAt: 0) + value) }
        field("store", summary.path)
        field("store ID", summary.storeID.uuidString)
        field("schema", "version \(summary.schemaVersion), bookkeeping format \(summary.format)")
        if let created = summary.createdAt { field("created", ValueFormatter.iso8601(created.timeIntervalSinceReferenceDate.rounded(.down))) }
        field("generation", Format.count(summary.changeLog.generation))
        field("change log", changeLog(summary.changeLog))
        let files = summary.files
        field("files", "database \(Format.bytes(files.database)), WAL \(files.wal.map { Format.bytes($0) } ?? "none"); "
              + "\(Format.count(files.pageCount, "page")) of \(Format.bytes(files.pageSize)), \(Format.count(files.freePages)) free")

        lines.append("")
        lines.append("entities")
        var entities = TextTable(["ENTITY", "TABLE", "ROWS", "ATTRIBUTES", "RESIDENT", "FULL TEXT"], rightAligned: [2, 3])
        for entity in summary.entities {
            let schema = entity.schema
            entities.add([schema.name, schema.table, entity.rowCount.map { Format.count($0) } ?? "missing",
                          String(schema.attributes.count), schema.isResident ? "yes" : "no",
                          schema.fullTextAttributes.isEmpty ? "-" : schema.fullTextAttributes.joined(separator: ", ")])
        }
        lines += entities.lines(indent: "  ")

        for entity in summary.entities {
            lines.append("")
            lines.append("attributes of \(entity.schema.name)")
            var attributes = TextTable(["ATTRIBUTE", "COLUMN", "TYPE", "OPTIONAL", "KEY"])
            for (index, attribute) in entity.schema.attributes.enumerated() {
                attributes.add([attribute.name, attribute.column, attribute.type.rawValue, attribute.isOptional ? "yes" : "no",
                                index == entity.schema.primaryKeyIndex ? "primary" : ""])
            }
            lines += attributes.lines(indent: "  ")
        }

        lines.append("")
        lines.append("indexes")
        var indexes = TextTable(["TABLE", "INDEX", "COLUMNS", "UNIQUE", "ORIGIN"])
        for entity in summary.entities {
            for index in entity.indexes {
                indexes.add([index.table, index.name, index.columns.joined(separator: ", "), index.isUnique ? "yes" : "no",
                             origin(index.origin)])
            }
            if let fullText = entity.fullTextTable {
                indexes.add([entity.schema.table, fullText, entity.schema.fullTextAttributes.joined(separator: ", "), "no",
                             "full text (FTS5)"])
            }
        }
        lines += indexes.rows.isEmpty ? ["  (none)"] : indexes.lines(indent: "  ")

        lines.append("")
        lines.append("schema history")
        var history = TextTable(["APPLIED", "KIND", "STEP"])
        for migration in summary.migrations {
            history.add([ValueFormatter.iso8601(migration.appliedAt.timeIntervalSinceReferenceDate.rounded(.down)),
                         migration.kind == .named ? "migration" : "automatic", migration.name])
        }
        lines += history.rows.isEmpty ? ["  (none)"] : history.lines(indent: "  ")
        return lines
    }

    static func changeLog(_ range: ChangeLogRange) -> String {
        guard let oldest = range.oldest, let newest = range.newest else { return "empty, floor \(range.floor)" }
        return "generations \(oldest)…\(newest) (\(Format.count(range.entries, "entry", plural: "entries"))), floor \(range.floor)"
    }

    static func origin(_ origin: IndexSummary.Origin) -> String {
        switch origin {
        case .declared: return "declared"
        case .primaryKey: return "primary key"
        case .uniqueConstraint: return "unique constraint"
        }
    }
}
