import Foundation

/// What someone outside the store committed to its file since the store last looked — another
/// connection or process, the `sqlite3` shell, ``Store/write(_:)`` — as the change log's
/// triggers recorded it: the keys each entity's rows were written under, and then those rows as
/// the file holds them.
///
/// The store reads it inside a transaction of its writer (`Store.drain`), so nothing else can
/// commit between reading the log, resolving its own pending saves of those objects against it
/// (``OutsideConflict``) and reading the rows back; it then reaches every context as one change
/// set (``ChangeSet/isOutside``), in the store's order, like any save.
struct OutsideChanges {
    /// The keys written from outside, by entity name (entities this store does not register are
    /// left out: no context can hold them).
    var keys: [String: Set<DatabaseValue>] = [:]
    /// The newest log generation read.
    var generation: Int64

    /// Whether the log was pruned past where the store last read it (another store on the file
    /// pruned it first): objects changed in the pruned part are not in ``keys``.
    var lostEntries = false

    var isEmpty: Bool { keys.values.allSatisfy(\.isEmpty) }

    /// The log entries after `known` up to `generation`, by entity.
    static func read(after known: Int64, through generation: Int64, registry: SchemaRegistry,
                     _ connection: Connection) throws -> OutsideChanges {
        var names: [Int64: String] = [:]
        for row in try connection.rows("SELECT rowid, name FROM \(SchemaMigrator.entitiesTable)") {
            guard let code = Int64.fromDatabaseValue(row[0]), let name = String.fromDatabaseValue(row[1]),
                  (try? registry.schema(named: name)) != nil else { continue }
            names[code] = name
        }
        var changes = OutsideChanges(generation: generation)
        changes.lostEntries = try ChangeLog.floor(connection) > known
        for row in try connection.rows("SELECT generation, entity, key FROM \(ChangeLog.table) WHERE generation > ? AND generation <= ?",
                                       [.integer(known), .integer(generation)]) {
            guard let logged = Int64.fromDatabaseValue(row[0]), let code = Int64.fromDatabaseValue(row[1]),
                  let name = names[code] else { continue }
            changes.keys[name, default: []].formUnion(try ChangeLog.keys(of: row[2], generation: logged))
        }
        return changes
    }

    /// Rows by entity, then by key: what the file holds for ``keys`` (a key without a row was deleted).
    typealias Rows = [String: [DatabaseValue: [DatabaseValue]]]

    /// The rows the file holds now for the keys written from outside.
    func rows(_ writer: Writer) throws -> Rows {
        var result: Rows = [:]
        for (entity, keys) in keys where !keys.isEmpty {
            let schema = try writer.statements(for: entity).schema
            let columns = schema.attributes.map(\.column.quotedIdentifier).joined(separator: ", ")
            let key = schema.primaryKey.column.quotedIdentifier
            let listed = Array(keys)
            var rows: [DatabaseValue: [DatabaseValue]] = [:]
            let chunk = max(1, writer.connection.maxVariableCount)
            for start in stride(from: 0, to: listed.count, by: chunk) {
                let part = Array(listed[start..<min(start + chunk, listed.count)])
                let sql = "SELECT \(columns) FROM \(schema.table.quotedIdentifier) WHERE \(key) IN ("
                    + Array(repeating: "?", count: part.count).joined(separator: ",") + ")"
                for row in try writer.connection.rows(sql, part, cached: false) { rows[row[schema.primaryKeyIndex]] = row }
            }
            result[entity] = rows
        }
        return result
    }
}

/// How a save or deletion a context made is written when someone outside the store changed the
/// same object after the context read it: by the context's ``MergePolicy``, the one rule both the
/// writer (in its transaction) and the change set that tells the contexts (for saves accepted
/// meanwhile) follow, so that the file and every context end equal.
enum OutsideConflict {
    enum Outcome: Equatable {
        /// Write this row (an upsert).
        case write([DatabaseValue])
        /// Delete the object.
        case delete
        /// Leave the stored object as it is.
        case keep
        /// Fail the change set with ``StrataError/Code/conflict``; its context gets its edits back, marked.
        case fail
    }

    /// The outcome for `operation` (a save or a deletion), given the row the file holds now (nil
    /// when no row does) and the policy of the context that made it.
    static func resolve(_ operation: ChangeSet.Operation, stored: [DatabaseValue]?, policy: MergePolicy) -> Outcome {
        switch operation {
        case .save(let save):
            guard let local = save.row else { return .fail }
            switch policy {
            case .localWins: return .write(local)
            case .storeWins: return .keep
            case .reportConflict: return .fail
            case .mergeProperties:
                // Deleted since: nothing to merge into (as a merge in a context resolves it).
                guard let stored else { return .keep }
                return .write(MergePolicy.merged(local: local, base: save.baseRow, onto: stored))
            }
        case .delete:
            switch policy {
            case .localWins, .mergeProperties: return .delete
            case .storeWins: return .keep
            case .reportConflict: return .fail
            }
        case .bulkUpdate, .bulkDelete:
            return .fail   // never asked: bulk operations have no base to conflict with
        }
    }

    /// The key `operation` writes, when it is a save or a deletion.
    static func key(of operation: ChangeSet.Operation, keyPosition: Int) -> DatabaseValue? {
        switch operation {
        case .save(let save): return save.row?[keyPosition] ?? save.object.id.databaseValue
        case .delete(_, let id): return id
        case .bulkUpdate, .bulkDelete: return nil
        }
    }
}

/// A change set failed because it wrote objects changed from outside since its context read them,
/// under ``MergePolicy/reportConflict``: the error to report, and the keys, by entity.
struct OutsideConflictFailure: Error {
    let error: StrataError
    let keys: [String: [DatabaseValue]]
}
