import Foundation

/// The schema diff at open: how the stored form of an existing entity (its `strata_entities`
/// record and its table's real columns) becomes the declared one — automatically where every
/// value is kept, refused before anything changes otherwise (``StrataError/Code/incompatibleSchema``,
/// naming the entity, the attribute, both forms and the way out). See Design.md, "Schema evolution".
extension SchemaMigrator {
    /// What opening the store does to one existing table, decided before anything is changed.
    struct EntityPlan {
        var renames: [(from: String, to: String)] = []
        var added: [AttributeSchema] = []
        /// Columns of attributes no longer declared whose values may go (none, or discarded).
        var dropped: [String] = []
        /// Whether the table is rebuilt (a column's affinity or NOT NULL must change): created
        /// anew as declared, every row copied with its rowid.
        var rebuild = false
        /// Columns the rebuild copies: declared column → the column it is read from.
        var copied: [(to: String, from: String)] = []

        var isEmpty: Bool { renames.isEmpty && added.isEmpty && dropped.isEmpty && !rebuild }
    }

    /// Diffs `schema` against the stored `stored` for an existing table and returns what to do.
    /// `migrated`: a named migration ran in this open (the app converted values itself: any type
    /// change whose values all fit the declared type is then accepted).
    /// - Throws: ``StrataError/Code/incompatibleSchema`` for the first change that would lose or
    ///   hide a stored value; a refusal for a new or a removed attribute also names every column
    ///   the entity does not declare that holds values, with how many.
    func plan(_ schema: EntitySchema, stored: EntitySchema?, _ database: Database, _ connection: Connection,
              migrated: Bool) throws -> EntityPlan {
        var plan = EntityPlan()
        let columns = try database.columns(in: schema.table)
        var present = Set(columns.map { $0.name.lowercased() })
        guard present.contains(schema.primaryKey.column.lowercased()) else {
            throw StrataError(.missingColumn, "table \(schema.table) has no primary key column \(schema.primaryKey.column)",
                              path: connection.path, entity: schema.name, attribute: schema.primaryKey.column)
        }
        let table = schema.table.quotedIdentifier
        // Counted only when a decision or a refusal needs it: a count walks the whole table, and
        // an open of an unchanged store comes before a warm start's archive may be loaded.
        var counted: Int?
        func rowCount() throws -> Int {
            if let counted { return counted }
            let rows = try count(table, nil, connection)
            counted = rows
            return rows
        }
        func refuse(_ attribute: String, _ stored: String, _ declared: String, _ why: String, _ wayOut: String) -> StrataError {
            StrataError(.incompatibleSchema, "\(schema.name).\(attribute): stored as \(stored), declared as \(declared): "
                        + "\(why). Nothing was changed. \(wayOut)", path: connection.path, entity: schema.name,
                        attribute: attribute)
        }
        let declaredColumns = Set(schema.attributes.map { $0.column.lowercased() })
        // The table's columns the entity does not declare (after the declared renames) that hold
        // values, each with its count of non-NULL values: what an undeclared rename or removal
        // would leave out of reach, named in the refusal so the app knows which column to declare.
        // Counted only for a refusal.
        func undeclaredValues() throws -> String {
            var held: [String] = []
            for column in columns.map(\.name).sorted()
            where present.contains(column.lowercased()) && !declaredColumns.contains(column.lowercased()) {
                let values = try count(table, "\(column.quotedIdentifier) IS NOT NULL", connection)
                if values > 0 { held.append("column \(column.quotedIdentifier) holds \(values) value\(values == 1 ? "" : "s")") }
            }
            return held.isEmpty ? "" : "; columns the entity does not declare hold values: " + held.joined(separator: ", ")
        }

        var storedByName = Dictionary((stored?.attributes ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        if let stored, stored.primaryKey.column.lowercased() != schema.primaryKey.column.lowercased()
            || stored.primaryKey.type.sqlType != schema.primaryKey.type.sqlType {
            throw refuse("id", "\(stored.primaryKey.type.rawValue) in column \(stored.primaryKey.column)",
                         "\(schema.primaryKey.type.rawValue) in column \(schema.primaryKey.column)",
                         "the primary key changed, and every object's identity with it",
                         "Keep the stored key, or move the objects to a new entity in a named migration.")
        }

        // Renames the app declared: the stored attribute under its former name becomes the new one.
        for (new, old) in schema.evolution.formerNames.sorted(by: { $0.key < $1.key }) {
            guard storedByName[new] == nil, var former = storedByName.removeValue(forKey: old),
                  let position = schema.position(of: new) else { continue }
            let column = schema.attributes[position].column
            if present.contains(former.column.lowercased()), former.column.lowercased() != column.lowercased() {
                guard !present.contains(column.lowercased()) else {
                    throw refuse(new, "column \(former.column) (as \(old))", "column \(column)",
                                 "both columns exist, so renaming one would hide the other's values",
                                 "Merge the two columns in a named migration.")
                }
                plan.renames.append((former.column, column))
                present.remove(former.column.lowercased())
                present.insert(column.lowercased())
            }
            former.name = new
            former.column = column
            storedByName[new] = former
        }

        for attribute in schema.attributes {
            let column = attribute.column
            guard present.contains(column.lowercased()) else {
                if try attribute.isOptional || schema.evolution.explicitDefaults.contains(attribute.name) || rowCount() == 0 {
                    plan.added.append(attribute)
                    continue
                }
                throw refuse(attribute.name, "nothing (a new attribute)", "non-optional \(attribute.type.rawValue) without a default",
                             "the table's \(try rowCount()) rows would each get a value nobody chose" + (try undeclaredValues()),
                             "Make it optional, give it an Entity.attributeDefaults value, declare its former name "
                             + "(Entity.formerAttributeNames) if it was renamed, or fill it in a named migration.")
            }
            plan.copied.append((column, column))
            let was = storedByName[attribute.name]
            let quoted = column.quotedIdentifier
            if let was, was.type != attribute.type {
                let misfits = try count(table, Self.misfitCondition(quoted, attribute.type), connection)
                guard migrated || Self.keepsEveryValue(from: was.type, to: attribute.type), misfits == 0 else {
                    throw refuse(attribute.name, was.type.rawValue, attribute.type.rawValue,
                                 misfits > 0 ? "\(misfits) of the \(try rowCount()) stored values cannot be read as \(attribute.type.rawValue)"
                                     : "a \(was.type.rawValue) cannot become a \(attribute.type.rawValue) without changing values",
                                 "Convert the values in a named migration (SQL or row by row with Database); "
                                 + "the type change is then accepted when every value fits.")
                }
                if was.type.sqlType != attribute.type.sqlType { plan.rebuild = true }
            } else if was == nil {
                // A column the app created itself (a named migration): its values must be readable.
                let misfits = try count(table, Self.misfitCondition(quoted, attribute.type), connection)
                if misfits > 0 {
                    throw refuse(attribute.name, "column \(column), not recorded", attribute.type.rawValue,
                                 "\(misfits) of its \(try rowCount()) values cannot be read as \(attribute.type.rawValue)",
                                 "Convert the values in the named migration that made the column.")
                }
            }
            let storedNotNull = columns.first { $0.name.lowercased() == column.lowercased() }?.isNotNull ?? false
            if !attribute.isOptional {
                let nulls = try count(table, "\(quoted) IS NULL", connection)
                if nulls > 0 {
                    throw refuse(attribute.name, "optional (\(nulls) rows hold NULL)", "non-optional",
                                 "those rows have no value to read",
                                 "Keep it optional, or fill the NULLs in a named migration.")
                }
            } else if storedNotNull {
                plan.rebuild = true   // NOT NULL goes: only a new table can drop a constraint
            }
        }

        // Attributes no longer declared (and not renamed): their values go only if the app says so.
        for former in storedByName.values.sorted(by: { $0.name < $1.name })
        where schema.position(of: former.name) == nil && present.contains(former.column.lowercased())
            && !declaredColumns.contains(former.column.lowercased()) {
            let holding = try count(table, "\(former.column.quotedIdentifier) IS NOT NULL", connection)
            guard holding == 0 || schema.evolution.discarded.contains(former.name) else {
                throw refuse(former.name, "\(former.type.rawValue) holding \(holding) values", "nothing (removed)",
                             "its values would be dropped or silently out of reach" + (try undeclaredValues()),
                             "Declare its new name in Entity.formerAttributeNames if it was renamed, list it in "
                             + "Entity.discardedAttributes if its values may go, or move them in a named migration.")
            }
            plan.dropped.append(former.column)
        }
        return plan
    }

    /// Carries out a plan decided by ``plan(_:stored:_:_:migrated:)`` (inside the opening
    /// transaction). Dropped columns that the rebuild does not drop are dropped by
    /// ``dropColumns(_:_:automatic:)`` after indexes and full-text tables no longer use them.
    func execute(_ plan: EntityPlan, _ schema: EntitySchema, _ connection: Connection,
                 automatic: (String, String) throws -> Void) throws {
        let table = schema.table.quotedIdentifier
        for (from, to) in plan.renames {
            try automatic("rename column \(schema.table).\(from) to \(to)",
                          "ALTER TABLE \(table) RENAME COLUMN \(from.quotedIdentifier) TO \(to.quotedIdentifier)")
        }
        for attribute in plan.added {
            try automatic("add column \(schema.table).\(attribute.column)",
                          "ALTER TABLE \(table) ADD COLUMN \(Self.columnDefinition(attribute))")
        }
        guard plan.rebuild else { return }
        // A new table as declared, every row copied with its rowid (the full-text index keeps
        // pointing at the right rows), then it takes the old one's name. Indexes, full-text
        // triggers and change-log triggers went with the old table; the steps after this make them again.
        let temporary = schema.table + "__strata_rebuild"
        var create = schema
        create.table = temporary
        let keyIsRowid = schema.primaryKey.type.sqlType == "INTEGER"
        let targets = plan.copied.map(\.to.quotedIdentifier) + plan.added.map(\.column.quotedIdentifier)
        let sources = plan.copied.map(\.from.quotedIdentifier) + plan.added.map(\.column.quotedIdentifier)
        try automatic("rebuild table \(schema.table)", Self.createTableSQL(create) + ";\n"
                      + "INSERT INTO \(temporary.quotedIdentifier) (\(keyIsRowid ? "" : "rowid, ")\(targets.joined(separator: ", "))) "
                      + "SELECT \(keyIsRowid ? "" : "rowid, ")\(sources.joined(separator: ", ")) FROM \(table);\n"
                      + "DROP TABLE \(table);\n"
                      + "ALTER TABLE \(temporary.quotedIdentifier) RENAME TO \(table)")
    }

    /// Drops the columns a plan let go (when the table was not rebuilt, which dropped them already).
    func dropColumns(_ plan: EntityPlan, _ schema: EntitySchema, automatic: (String, String) throws -> Void) throws {
        guard !plan.rebuild else { return }
        for column in plan.dropped {
            try automatic("drop column \(schema.table).\(column)",
                          "ALTER TABLE \(schema.table.quotedIdentifier) DROP COLUMN \(column.quotedIdentifier)")
        }
    }

    private func count(_ table: String, _ condition: String?, _ connection: Connection) throws -> Int {
        let sql = "SELECT count(*) FROM \(table)" + (condition.map { " WHERE " + $0 } ?? "")
        return Int.fromDatabaseValue(try connection.rows(sql, cached: false).first?.first ?? .null) ?? 0
    }

    /// The SQL condition true for a stored value that `type` cannot read: a storage class it does
    /// not admit (``AttributeType/admits(_:)``, the one rule), NULL excepted.
    static func misfitCondition(_ column: String, _ type: AttributeType) -> String {
        let admitted = StorageClass.allCases.filter(type.admits).map { "'\($0.name)'" }
        return "\(column) IS NOT NULL AND typeof(\(column)) NOT IN (\(admitted.joined(separator: ", ")))"
    }

    /// Type changes that keep every value as it is, with no migration: the new type reads each
    /// stored value and means the same by it.
    static func keepsEveryValue(from: AttributeType, to: AttributeType) -> Bool {
        switch (from, to) {
        case (.bool, .integer), (.date, .real), (.real, .date), (.uuid, .text), (.url, .text), (.decimal, .text), (.json, .text):
            return true
        default:
            return false
        }
    }
}
