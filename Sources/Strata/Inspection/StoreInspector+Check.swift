import Foundation

extension StoreInspector {
    /// Checks the store — SQLite's `integrity_check` and `foreign_key_check`, the change log's
    /// continuity, the history's transactions and consumers against the log, the entity tables against their recorded schemas, every stored value against
    /// its attribute's type — and, when `snapshot` is given, whether that snapshot is valid for
    /// the store.
    ///
    /// The change log is continuous when every generation after the floor is present (they are
    /// the log's row IDs, so they increase strictly by construction), nothing at or below the
    /// floor remains, every entry names a recorded entity and a known operation, and an empty log
    /// has no floor (or the next change would reuse an old generation).
    ///
    /// A part of the file SQLite reports damaged (`SQLITE_CORRUPT`) fails the check that read it,
    /// with SQLite's message, and the other checks still run. (A file too damaged to open as a
    /// store is checked by ``checkDamagedFile(at:snapshot:openError:)``.)
    /// - Throws: `.cannotOpen` when `snapshot` names no file; other SQLite errors reading the store.
    public func check(snapshot: String? = nil) throws -> CheckReport {
        var items = [
            try checking(CheckReport.Item.integrity) {
                CheckReport.Item(name: CheckReport.Item.integrity, detail: "PRAGMA integrity_check: ok",
                                 problems: try connection.integrityProblems())
            },
            try checking(CheckReport.Item.foreignKeys) {
                CheckReport.Item(name: CheckReport.Item.foreignKeys, detail: "PRAGMA foreign_key_check: ok",
                                 problems: try connection.foreignKeyProblems())
            },
            try checking(CheckReport.Item.changeLog, changeLogContinuity),
            try checking(CheckReport.Item.history, historyBookkeeping),
            try checking(CheckReport.Item.entityTables, entityTables),
            try checking(CheckReport.Item.storedValues, storedValues),
        ]
        if let snapshot {
            try Self.requireSnapshotFile(snapshot)
            items.append(try checking(CheckReport.Item.snapshot) {
                let validity = try snapshotValidity(at: snapshot)
                return CheckReport.Item(name: CheckReport.Item.snapshot, detail: validity.description,
                                        problems: validity.isValid ? [] : [validity.description])
            })
        }
        return CheckReport(items: items)
    }

    /// Runs one check; a damaged part of the file fails it rather than ending the whole check.
    private func checking(_ name: String, _ body: () throws -> CheckReport.Item) throws -> CheckReport.Item {
        do {
            return try body()
        } catch let error as StrataError where error.code == .corrupt {
            return CheckReport.Item(name: name, detail: "", problems: ["cannot be checked: \(error.message)"])
        }
    }

    static func requireSnapshotFile(_ snapshot: String) throws {
        guard FileManager.default.fileExists(atPath: snapshot) else {
            throw StrataError(.cannotOpen, "no such snapshot file", path: snapshot)
        }
    }

    func count(_ sql: String, _ arguments: [DatabaseValue] = []) throws -> Int64 {
        Int64.fromDatabaseValue(try connection.rows(sql, arguments, cached: false).first?.first ?? .null) ?? 0
    }

    func changeLogContinuity() throws -> CheckReport.Item {
        let range = try changeLog()
        let table = ChangeLog.table
        var problems: [String] = []
        let stale = try count("SELECT count(*) FROM \(table) WHERE generation <= ?", [.integer(range.floor)])
        if stale > 0 {
            problems.append("\(stale) \(stale == 1 ? "entry" : "entries") at or below the floor \(range.floor) "
                            + "\(stale == 1 ? "was" : "were") not pruned")
        }
        if let newest = range.newest, newest > range.floor {
            let present = try count("SELECT count(*) FROM \(table) WHERE generation > ?", [.integer(range.floor)])
            if present != newest - range.floor {
                let gap = try count("""
                    SELECT min(g) FROM (SELECT ? AS g UNION ALL SELECT generation + 1 FROM \(table) WHERE generation >= ?)
                    WHERE g <= ? AND g NOT IN (SELECT generation FROM \(table))
                    """, [.integer(range.floor + 1), .integer(range.floor + 1), .integer(newest)])
                let missing = newest - range.floor - present
                problems.append("\(missing) generation\(missing == 1 ? " is" : "s are") missing between \(range.floor + 1) "
                                + "and \(newest) (the first is \(gap))")
            }
        } else if range.newest == nil, range.floor > 0 {
            problems.append("the log is empty but its floor is \(range.floor): the next change would reuse generation 1")
        }
        for row in try connection.rows("SELECT DISTINCT entity FROM \(table) ORDER BY entity", cached: false) {
            if let code = Int64.fromDatabaseValue(row[0]), entityCodes[code] == nil {
                problems.append("entries name entity code \(code), which \(SchemaMigrator.entitiesTable) does not record")
            }
        }
        let badOperations = try count("SELECT count(*) FROM \(table) WHERE op NOT IN (?, ?, ?)",
                                      [.integer(ChangeLog.insert), .integer(ChangeLog.update), .integer(ChangeLog.delete)])
        if badOperations > 0 {
            problems.append("\(badOperations) \(badOperations == 1 ? "entry has" : "entries have") an unknown operation code")
        }
        let detail: String
        if let oldest = range.oldest, let newest = range.newest {
            detail = "generations \(oldest)…\(newest) continuous (\(range.entries) \(range.entries == 1 ? "entry" : "entries"), "
                + "floor \(range.floor))"
        } else {
            detail = "empty (floor \(range.floor))"
        }
        return CheckReport.Item(name: CheckReport.Item.changeLog, detail: detail, problems: problems)
    }

    /// Every stored value against its recorded attribute: a storage class the attribute's type
    /// reads (the rule ``AttributeType/admits(_:)`` states and migrations check), and no NULL in a
    /// non-optional attribute. Problems are counts per attribute; a value that fails here is one a
    /// fetch of its object would fail on.
    func storedValues() throws -> CheckReport.Item {
        let database = Database(connection: connection)
        var problems: [String] = []
        var checked: Int64 = 0
        for schema in entities where try database.tableExists(schema.table) {
            let present = Set(try database.columns(in: schema.table).map { $0.name.lowercased() })
            let table = schema.table.quotedIdentifier
            let rows = try count("SELECT count(*) FROM \(table)")
            for attribute in schema.attributes where present.contains(attribute.column.lowercased()) {
                checked += rows
                let column = attribute.column.quotedIdentifier
                let misfits = try count("SELECT count(*) FROM \(table) WHERE "
                                        + SchemaMigrator.misfitCondition(column, attribute.type))
                if misfits > 0 {
                    problems.append("\(schema.name).\(attribute.name): \(misfits) of \(rows) values cannot be read as "
                                    + "\(attribute.type.rawValue)")
                }
                if !attribute.isOptional {
                    let nulls = try count("SELECT count(*) FROM \(table) WHERE \(column) IS NULL")
                    if nulls > 0 {
                        problems.append("\(schema.name).\(attribute.name): \(nulls) of \(rows) values are NULL, "
                                        + "but the attribute is not optional")
                    }
                }
            }
        }
        return CheckReport.Item(name: CheckReport.Item.storedValues,
                                detail: "\(checked) values fit their attributes' types", problems: problems)
    }

    func entityTables() throws -> CheckReport.Item {
        let database = Database(connection: connection)
        var problems: [String] = []
        for schema in entities {
            guard try database.tableExists(schema.table) else {
                problems.append("\(schema.name): table \(schema.table) is missing")
                continue
            }
            let columns = try database.columns(in: schema.table).map(\.name)
            let lowercased = Set(columns.map { $0.lowercased() })
            for attribute in schema.attributes where !lowercased.contains(attribute.column.lowercased()) {
                problems.append("\(schema.name): table \(schema.table) has no column \(attribute.column) (attribute \(attribute.name))")
            }
            // A column no recorded attribute reads, holding values: data out of the app's reach.
            let recorded = Set(schema.attributes.map { $0.column.lowercased() })
            for column in columns where !recorded.contains(column.lowercased()) {
                let holding = try count("SELECT count(*) FROM \(schema.table.quotedIdentifier) WHERE \(column.quotedIdentifier) IS NOT NULL")
                if holding > 0 {
                    problems.append("\(schema.name): column \(column) holds \(holding) values that no recorded attribute reads")
                }
            }
            let indexes = Set(try database.indexes(on: schema.table))
            for index in schema.indexes where !indexes.contains(schema.indexName(index)) {
                problems.append("\(schema.name): index \(schema.indexName(index)) is missing")
            }
            if !schema.fullTextAttributes.isEmpty, try !database.tableExists(schema.fullTextTable) {
                problems.append("\(schema.name): full-text table \(schema.fullTextTable) is missing")
            }
            for suffix in ["insert", "update", "delete"] {
                let trigger = "strata_log_\(schema.table)_\(suffix)"
                if try connection.rows("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?",
                                       [.text(trigger)], cached: false).isEmpty {
                    problems.append("\(schema.name): change-log trigger \(trigger) is missing (changes go unlogged)")
                }
            }
        }
        let detail = entities.count == 1 ? "1 entity matches its recorded schema"
            : "\(entities.count) entities match their recorded schemas"
        return CheckReport.Item(name: CheckReport.Item.entityTables, detail: detail, problems: problems)
    }
}
