import Foundation
import Strata
import StrataSyncWire

/// This device's edits not yet acknowledged by the server, per object: what a pulled change
/// may conflict with.
struct LocalEdits: Sendable {
    struct Object: Sendable {
        /// Each edited attribute's time (the edit's commit time, or its re-stamp).
        var attributes: [String: Int64] = [:]
        var isDeleted = false
    }

    var objects: [String: [SyncKey: Object]] = [:]
    /// The newest transaction read: a local edit settled against a pull is one at or before it.
    var through: Int64 = 0

    /// The edits of `walk` (the history from the push position to its end), with the
    /// overrides' re-stamps and dropped edits applied. The edits of the `pending` batch, whose
    /// content is fixed, take the times they are sent with: the server will compare those.
    init(_ walk: HistoryWalk, schemas: [String: EntitySchema], overrides: [AttributeRef: EditOverride],
         pending: PushRequest?) {
        defer {
            for entry in pending?.changes ?? [] where entry.op != .delete {
                for key in entry.ids.keys {
                    for name in entry.values.keys where objects[entry.entity]?[key]?.attributes[name] != nil {
                        objects[entry.entity]?[key]?.attributes[name] = entry.time
                    }
                }
            }
        }
        through = walk.newestToken
        for slice in walk.slices {
            guard let schema = schemas[slice.entity] else { continue }
            let time = Int64((slice.date.timeIntervalSince1970 * 1000).rounded(.down))
            let names = slice.operation == .insert
                ? schema.attributes.enumerated().filter { $0.offset != schema.primaryKeyIndex }.map(\.element.name)
                : slice.attributes
            for id in slice.ids {
                guard let key = SyncKey(id) else { continue }
                var object = objects[slice.entity]?[key] ?? Object()
                switch slice.operation {
                case .delete:
                    object.isDeleted = true
                case .insert, .update:
                    object.isDeleted = false
                    for name in names {
                        let rule = overrides[AttributeRef(entity: slice.entity, id: key, attribute: name)]
                        if let rule, rule.through >= slice.token {
                            // Dropped: no longer an edit of this device's.
                            guard let restamp = rule.restamp else { continue }
                            object.attributes[name] = max(time, restamp)
                        } else {
                            object.attributes[name] = time
                        }
                    }
                }
                objects[slice.entity, default: [:]][key] = object
            }
        }
    }

    func object(_ entity: String, _ key: SyncKey) -> Object? { objects[entity]?[key] }

    mutating func forget(_ entity: String, _ key: SyncKey) { objects[entity]?[key] = nil }

    mutating func forget(_ entity: String, _ key: SyncKey, attribute: String) {
        objects[entity]?[key]?.attributes[attribute] = nil
    }

    mutating func restamp(_ entity: String, _ key: SyncKey, attribute: String, to time: Int64) {
        objects[entity]?[key]?.attributes[attribute] = time
    }
}
