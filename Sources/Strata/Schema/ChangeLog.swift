import Foundation

/// The store's change log: every committed insert, update and delete of an entity row gets a
/// monotonically increasing generation (the log's rowid).
///
/// Two writers fill it. Triggers log each row that anyone else changes — another process, the
/// `sqlite3` shell, `Store.write`, migrations — one entry per row. Strata's own change sets are
/// logged by the writer instead, one entry per run of same-kind operations in a change set
/// (10,000 inserts are one entry whose key is a blob: the JSON array of the keys, in order). The
/// triggers never log those rows: the writer applies its change sets with triggers switched off
/// on its own connection (`SQLITE_DBCONFIG_ENABLE_TRIGGER`, which no other connection sees), so
/// the triggers cost Strata's own writes nothing. When a table the change sets write carries other
/// triggers that must fire (a full-text index's, the app's own), the writer leaves triggers on
/// and deletes the entries the log triggers made before it logs the change set itself
/// (`Writer.applyingOwnChanges`). An update's entry names the attributes it changed.
///
/// Consecutive entries form the store's history transactions (`strata_transactions`,
/// `ChangeLog+Transactions`): one per change set the writer commits, with its author, and one per
/// span of other writers' entries, closed by whichever store looks next. The log is pruned by
/// whole transactions past its bounds; `strata_meta.log_floor` records the highest generation
/// pruned away.
enum ChangeLog {
    static let table = "strata_changes"

    /// Operation codes stored in the log.
    static let insert: Int64 = 1, update: Int64 = 2, delete: Int64 = 3

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS \(table) (
            generation INTEGER PRIMARY KEY, entity INTEGER NOT NULL, key NOT NULL, op INTEGER NOT NULL, attributes TEXT);
        """

    /// The triggers that log changes to `schema`'s table, by name. `code` identifies the entity
    /// compactly. They fire for every row written with triggers on: the writer switches them off
    /// for its own change sets (see the type's summary). The update trigger names the attributes
    /// whose values differ between OLD and NEW (`IS NOT`: SQLite's equality), comma-separated
    /// in schema order; no JSON is built per row. Without `comparingAttributes` it names no column
    /// but the key and logs updates without their attributes: while a migration may drop a
    /// column, since SQLite refuses to drop one a trigger names.
    static func triggers(_ schema: EntitySchema, code: Int64, comparingAttributes: Bool = true) -> [(name: String, sql: String)] {
        let table = schema.table.quotedIdentifier
        let key = schema.primaryKey.column.quotedIdentifier
        let prefix = triggerPrefix + schema.table
        let changed = schema.attributes.indices.filter { $0 != schema.primaryKeyIndex }.map { index in
            let column = schema.attributes[index].column.quotedIdentifier
            return "CASE WHEN old.\(column) IS NOT new.\(column) THEN \(DatabaseValue.text("," + schema.attributes[index].name).description) ELSE '' END"
        }
        let attributes = !comparingAttributes ? "NULL" : changed.isEmpty ? "''" : "substr(" + changed.joined(separator: " || ") + ", 2)"
        return [
            (prefix + "_insert", """
                CREATE TRIGGER \((prefix + "_insert").quotedIdentifier) AFTER INSERT ON \(table) BEGIN
                    INSERT INTO \(Self.table) (entity, key, op) VALUES (\(code), new.\(key), \(insert));
                END
                """),
            (prefix + "_update", """
                CREATE TRIGGER \((prefix + "_update").quotedIdentifier) AFTER UPDATE ON \(table) BEGIN
                    INSERT INTO \(Self.table) (entity, key, op) SELECT \(code), old.\(key), \(delete) WHERE old.\(key) IS NOT new.\(key);
                    INSERT INTO \(Self.table) (entity, key, op, attributes) VALUES (\(code), new.\(key), \(update), \(attributes));
                END
                """),
            (prefix + "_delete", """
                CREATE TRIGGER \((prefix + "_delete").quotedIdentifier) AFTER DELETE ON \(table) BEGIN
                    INSERT INTO \(Self.table) (entity, key, op) VALUES (\(code), old.\(key), \(delete));
                END
                """),
        ]
    }

    static let triggerPrefix = "strata_log_"

    /// Whether `name` is one of the log triggers of `table` (compared as SQLite compares names,
    /// ignoring ASCII case).
    static func isLogTrigger(_ name: String, on table: String) -> Bool {
        let name = name.lowercased(), prefix = (triggerPrefix + table).lowercased()
        return ["_insert", "_update", "_delete"].contains { name == prefix + $0 }
    }

    /// Creates `schema`'s log triggers, replacing any whose definition differs: runs at every
    /// open (`SchemaMigrator`), so a store made by an earlier version gets today's triggers
    /// (the first ones logged Strata's own writes row by row; later ones stood aside while a
    /// `writer_batch` marker row was in `strata_meta`).
    static func installTriggers(_ schema: EntitySchema, code: Int64, _ connection: Connection,
                                comparingAttributes: Bool = true) throws {
        for trigger in triggers(schema, code: code, comparingAttributes: comparingAttributes) {
            let existing = try connection.rows("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?",
                                               [.text(trigger.name)]).first?.first
            if existing == .text(trigger.sql) { continue }
            if existing != nil { try connection.execute("DROP TRIGGER \(trigger.name.quotedIdentifier)") }
            try connection.execute(trigger.sql)
        }
    }

    // MARK: The writer's entries

    /// The entries one change set adds to the log: runs of the same entity, operation and
    /// changed attributes, in the order the operations ran.
    struct Batch {
        private(set) var runs: [(code: Int64, op: Int64, attributes: String?, keys: [DatabaseValue])] = []

        var isEmpty: Bool { runs.isEmpty }

        /// Appends one object's change; `attributes` names, for an update, the attributes it
        /// changed (comma-separated, as the triggers write them).
        mutating func append(code: Int64, op: Int64, key: DatabaseValue, attributes: String? = nil) {
            if let last = runs.indices.last, runs[last].code == code, runs[last].op == op, runs[last].attributes == attributes {
                runs[last].keys.append(key)
            } else {
                runs.append((code, op, attributes, [key]))
            }
        }

        /// Appends a bulk operation's keys as one entry of their own (never joined to a run of
        /// saves: a bulk operation is one entry of the history).
        mutating func append(code: Int64, op: Int64, keys: [DatabaseValue], attributes: String? = nil) {
            guard !keys.isEmpty else { return }
            runs.append((code, op, attributes, keys))
        }

        /// Inserts one log entry per run — a single key as itself (as a trigger logs it), several
        /// as a blob holding their JSON array — then, when there was any, the history transaction
        /// they make (``ChangeLog/recordTransaction(through:author:origin:at:_:)``).
        func write(_ connection: Connection, author: String?, at date: Double) throws {
            guard !runs.isEmpty else { return }
            let statement = try connection.prepare("INSERT INTO \(ChangeLog.table) (entity, key, op, attributes) VALUES (?, ?, ?, ?)")
            for run in runs {
                let key = run.keys.count == 1 ? run.keys[0] : .blob(ChangeLog.encode(run.keys))
                try statement.run([.integer(run.code), key, .integer(run.op), run.attributes.map(DatabaseValue.text) ?? .null])
            }
            try ChangeLog.recordTransaction(through: connection.lastInsertedRowID, author: author, origin: .store, at: date, connection)
        }
    }

    /// Keys as a JSON array (text keys as strings, integer keys as numbers), UTF-8.
    /// Written byte by byte into one buffer, not a string built per key: a log entry lists every
    /// key a run inserted.
    static func encode(_ keys: [DatabaseValue]) -> Data {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(keys.count * 16 + 2)
        for (index, key) in keys.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            switch key {
            case .integer(let int): bytes.append(contentsOf: String(int).utf8)
            case .text(let string): appendJSONString(string, to: &bytes)
            case .real(let real): bytes.append(contentsOf: "\(real)".utf8)
            case .null, .blob: bytes.append(contentsOf: "null".utf8)
            }
        }
        bytes.append(UInt8(ascii: "]"))
        return Data(bytes)
    }

    /// The keys of a log entry: the key itself, or the keys of a writer's batch.
    /// - Throws: `.corrupt` for a batch that is not a JSON array of keys.
    static func keys(of stored: DatabaseValue, generation: Int64) throws -> [DatabaseValue] {
        guard case .blob(let data) = stored else { return [stored] }
        do {
            return try JSONDecoder().decode([LoggedKey].self, from: data).map(\.value)
        } catch {
            throw StrataError(.corrupt, "change-log entry \(generation) holds a batch that is not a JSON array of keys")
        }
    }

    private struct LoggedKey: Decodable {
        let value: DatabaseValue
        init(from decoder: Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let int = try? container.decode(Int64.self) {
                value = .integer(int)
            } else {
                value = .text(try container.decode(String.self))
            }
        }
    }

    /// `string` as a JSON string: quotes and backslashes escaped, control characters as `\\u00XX`,
    /// every other byte of its UTF-8 as it is.
    private static func appendJSONString(_ string: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        // Most keys need no escape: their UTF-8 is copied in one piece.
        var string = string
        let copied = string.withUTF8 { utf8 in
            guard !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if copied {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(byte)
            case ..<0x20: bytes.append(contentsOf: String(format: "\\u%04x", byte).utf8)
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// The newest generation (0 for an empty log).
    static func generation(_ connection: Connection) throws -> Int64 {
        Int64.fromDatabaseValue(try connection.rows("SELECT max(generation) FROM \(table)").first?.first ?? .null) ?? 0
    }

    /// The highest generation pruned from the log: changes after it are all still there.
    static func floor(_ connection: Connection) throws -> Int64 {
        let value = try connection.rows("SELECT value FROM \(SchemaMigrator.metaTable) WHERE key = 'log_floor'").first?.first
        return Int64.fromDatabaseValue(value ?? .null) ?? 0
    }
}

/// A position in the store's change log, for asking what changed since.
public struct ChangeToken: Sendable, Hashable, Codable, Comparable {
    /// The generation: every committed change up to it is before the token.
    public let generation: Int64

    /// A token at `generation`, for example one saved from an earlier ``ChangeHistory/token``.
    public init(generation: Int64) { self.generation = generation }

    /// Whether `lhs` is an earlier position in the log than `rhs`.
    public static func < (lhs: ChangeToken, rhs: ChangeToken) -> Bool { lhs.generation < rhs.generation }
}

/// One entry of the change log.
public struct LoggedChange: Sendable, Hashable {
    /// What happened to an object.
    public enum Operation: Sendable, Hashable {
        /// The object was inserted.
        case insert
        /// The object was updated (including an update that gave it this primary key).
        case update
        /// The object was deleted (including an update that took this primary key away).
        case delete
    }
    /// The change's position in the log.
    public let generation: Int64
    /// The entity's name (``Entity/entityName``).
    public let entity: String
    /// The object's primary key as stored.
    public let key: DatabaseValue
    /// What happened to the object.
    public let operation: Operation
}

/// What changed since a token, and the token to ask from next time.
public struct ChangeHistory: Sendable {
    /// The changes after the token asked about, oldest first.
    public let changes: [LoggedChange]
    /// The token to pass to ``Store/changes(since:)`` next time.
    public let token: ChangeToken
}
