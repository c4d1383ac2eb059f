import Foundation
import Strata

/// Consecutive IDs of one change of one history transaction: what one or more push entries are
/// made of.
struct HistorySlice: Sendable {
    let entity: String
    let operation: LoggedChange.Operation
    var ids: [DatabaseValue]
    /// For an update, the attributes it changed (every attribute when the history names none).
    let attributes: [String]
    /// The transaction's token and commit time.
    let token: Int64
    let date: Date
}

/// How many entries a batch may hold, and IDs an entry.
struct PushBudget: Sendable {
    var maxEntries: Int
    var maxIDsPerEntry: Int
}

/// A walk over the local history from a push position: the slices read and where it ended.
///
/// A unit is one ID of one change of a transaction; a position counts the units pushed of the
/// transaction after its token, so a transaction of 20,000 inserts spans several batches. The
/// engine's own transactions (what it pulled) have no units: a walk passes them. The engine's
/// history consumer keeps what it has not pushed from being pruned.
struct HistoryWalk: Sendable {
    var slices: [HistorySlice] = []
    /// Where the walk stopped.
    var end: PushPosition
    /// The newest transaction read that holds local edits (0 when none).
    var newestToken: Int64 = 0

    var isEmpty: Bool { slices.isEmpty }

    /// Walks from `start` as far as `budget` allows (a new batch), else to the end of the
    /// history (the unpushed edits).
    static func read(_ store: Store, entities: [any Entity.Type], schemas: [String: EntitySchema], author: String,
                     from start: PushPosition, budget: PushBudget? = nil) async throws -> HistoryWalk {
        var walk = HistoryWalk(end: start)
        var entries = 0
        var first = true
        transactions: for try await transaction in store.history(since: ChangeToken(generation: start.token), entities: entities) {
            let skip = first ? start.units : 0
            first = false
            let before = walk.end.token
            let units = transaction.author == author ? [] : transaction.changes
            let total = units.reduce(0) { $0 + $1.ids.count }
            if total == 0 {
                walk.end = PushPosition(token: transaction.token.generation, units: 0)
                continue
            }
            var unit = 0
            for change in units {
                for id in change.ids {
                    defer { unit += 1 }
                    guard unit >= skip else { continue }
                    let continues = walk.slices.last.map { $0.token == transaction.token.generation && $0.entity == change.entity
                        && $0.operation == change.operation && $0.attributes == attributes(of: change, schemas) && !$0.ids.isEmpty }
                        ?? false
                    let startsSlice = !continues || (change.operation != .insert
                                                     && walk.slices[walk.slices.count - 1].ids.count >= (budget?.maxIDsPerEntry ?? .max))
                    let cost = change.operation == .insert || startsSlice ? 1 : 0
                    if let budget, entries + cost > budget.maxEntries, entries > 0 { break transactions }
                    entries += cost
                    if startsSlice {
                        walk.slices.append(HistorySlice(entity: change.entity, operation: change.operation, ids: [id],
                                                        attributes: attributes(of: change, schemas),
                                                        token: transaction.token.generation, date: transaction.date))
                    } else {
                        walk.slices[walk.slices.count - 1].ids.append(id)
                    }
                    walk.newestToken = transaction.token.generation
                    walk.end = unit + 1 == total ? PushPosition(token: transaction.token.generation, units: 0)
                        : PushPosition(token: before, units: unit + 1)
                }
            }
        }
        return walk
    }

    /// The attributes an update names, or all of the entity's (a migration's update names none).
    private static func attributes(of change: HistoryChange, _ schemas: [String: EntitySchema]) -> [String] {
        guard change.operation == .update else { return [] }
        if !change.changedAttributes.isEmpty { return change.changedAttributes }
        guard let schema = schemas[change.entity] else { return [] }
        return schema.attributes.enumerated().filter { $0.offset != schema.primaryKeyIndex }.map(\.element.name)
    }
}
