import Foundation

/// The pending (accepted, not yet committed) operations on one entity, applied to rows read from
/// SQLite so that a fetch sees every change set submitted before it. Pending saves are shown as
/// if they will succeed.
struct PendingOverlay {
    let schema: EntitySchema
    private(set) var operations: [ChangeSet.Operation] = []
    /// Primary keys named by pending saves, deletes and bulk operations by ID.
    private(set) var touchedIDs: [DatabaseValue] = []
    /// Whether a pending bulk operation selects rows by filter (then every row may be affected).
    private(set) var hasFilterTargets = false

    init(schema: EntitySchema, pending: [PipelineState.Pending]) {
        self.schema = schema
        for item in pending {
            for operation in item.changes.operations where operation.entityName == schema.name {
                operations.append(operation)
                switch operation {
                case .save(let save): touchedIDs.append(save.object.id.databaseValue)
                case .delete(_, let id): touchedIDs.append(id)
                case .bulkUpdate(_, .ids(let ids), _), .bulkDelete(_, .ids(let ids)): touchedIDs.append(contentsOf: ids)
                case .bulkUpdate(_, .filter, _), .bulkDelete(_, .filter): hasFilterTargets = true
                }
            }
        }
    }

    var isEmpty: Bool { operations.isEmpty }

    /// The WHERE clause that reads every row the query or the overlay may need, or nil for all rows.
    func widenedCondition(_ filter: ResolvedFilter, variableLimit: Int) -> (String, [DatabaseValue])? {
        if hasFilterTargets || filter.isAlwaysTrue { return nil }
        let (condition, arguments) = filter.sql()
        if arguments.count + touchedIDs.count > variableLimit { return nil }
        let list = Array(repeating: "?", count: touchedIDs.count).joined(separator: ",")
        return ("(\(condition)) OR \(schema.primaryKey.column.quotedIdentifier) IN (\(list))", arguments + touchedIDs)
    }

    /// Applies the pending operations, in order, to `rows` (keyed by primary key).
    func apply(to rows: inout [DatabaseValue: [DatabaseValue]], encoder: RowEncoder) throws {
        let key = schema.primaryKeyIndex
        for operation in operations {
            switch operation {
            case .save(let save):
                let row = try save.row ?? encoder.encode(save.object)
                if save.mode == .update, rows[row[key]] == nil { continue }
                rows[row[key]] = row
            case .delete(_, let id):
                rows[id] = nil
            case .bulkUpdate(_, let target, let assignments):
                let positions = assignments.map { (schema.position(of: $0.attribute)!, $0.value) }
                for id in try matchingKeys(target, rows) {
                    for (position, value) in positions { rows[id]![position] = value }
                }
            case .bulkDelete(_, let target):
                for id in try matchingKeys(target, rows) { rows[id] = nil }
            }
        }
    }

    private func matchingKeys(_ target: ChangeSet.BulkTarget, _ rows: [DatabaseValue: [DatabaseValue]]) throws -> [DatabaseValue] {
        switch target {
        case .ids(let ids): return ids.filter { rows[$0] != nil }
        case .filter(let filter):
            let resolved = try ResolvedFilter(filter, schema: schema)
            return rows.filter { resolved.matches($0.value) }.map(\.key)
        }
    }
}
