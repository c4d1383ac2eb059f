@_spi(Sync) import Strata
import StrataSyncWire

/// The change set one pulled page becomes, built entry by entry (``SyncEngine/add(_:to:state:)``).
struct PullBuilder: Sendable {
    var changes = ChangeSet()
    var edits: LocalEdits
    /// Whether an object exists, as far as this page knows (read once, then kept up to date).
    var exists: [String: [DatabaseValue: Bool]] = [:]
    var conflicts: [(SyncConflict, SyncConflictOutcome)] = []

    init(edits: LocalEdits) { self.edits = edits }
}

extension SyncEngine {
    /// Adds one pulled entry to `builder`: deletions always; attribute values where this device
    /// has no unpushed edit of them, else, for another device's entry, as the policy settles it
    /// (an own entry is older than any unpushed edit: the edit stays); nothing for an object
    /// this device deleted (its deletion is pushed and wins).
    func add(_ entry: SyncEntry, to builder: inout PullBuilder, state: inout SyncState, isOwn: Bool = false) async throws {
        // Entities this app does not sync (a newer app's) are not stored here.
        guard let schema = schemas[entry.entity] else { return }
        let entity = entry.entity
        let place = "pulled entry \(entry.seq.map(String.init) ?? "") (\(entry.op.rawValue) \(entity))"
        let keys = entry.ids.keys
        if entry.op == .delete {
            builder.changes.deleteAll(entity: entity, ids: keys.map(\.databaseValue))
            for key in keys {
                builder.edits.forget(entity, key)
                builder.exists[entity, default: [:]][key.databaseValue] = false
            }
            return
        }
        var values: [String: DatabaseValue] = [:]
        for (name, value) in entry.values {
            // Attributes this app does not have (a newer app's) are not stored here.
            guard let position = schema.position(of: name), position != schema.primaryKeyIndex else { continue }
            values[name] = try storedValue(value, entity, schema.attributes[position], at: place)
        }
        var plain: [DatabaseValue] = []
        for key in keys {
            let id = key.databaseValue
            guard let local = builder.edits.object(entity, key) else {
                plain.append(id)
                continue
            }
            if local.isDeleted { continue }
            var kept = values
            for (name, serverValue) in values.sorted(by: { $0.key < $1.key }) {
                guard let localTime = local.attributes[name] else { continue }
                if isOwn {
                    kept[name] = nil
                    continue
                }
                let localValue = try await storedValues(entity, id, [name])?[name]
                let conflict = SyncConflict(entity: entity, id: id, attribute: name, localValue: localValue,
                                            serverValue: serverValue, localTime: localTime, serverTime: entry.time,
                                            serverDevice: entry.device ?? "")
                let (value, outcome) = settle(conflict, deviceID: state.device)
                let ref = AttributeRef(entity: entity, id: key, attribute: name)
                switch outcome {
                case .serverValueKept:
                    // The local edit is dropped: never pushed.
                    kept[name] = value
                    state.overrides[ref] = EditOverride(through: builder.edits.through, restamp: nil)
                    builder.edits.forget(entity, key, attribute: name)
                case .localValueKept, .resolvedValueKept:
                    if let value { kept[name] = value } else { kept[name] = nil }
                    let local = SyncStamp(time: localTime, device: state.device)
                    if local < entry.stamp {
                        // Pushed with a time after the server's, so that it wins there too.
                        let time = entry.time + 1
                        state.overrides[ref] = EditOverride(through: builder.edits.through, restamp: time)
                        builder.edits.restamp(entity, key, attribute: name, to: time)
                        state.clock.observe(time)
                    }
                }
                builder.conflicts.append((conflict, outcome))
            }
            if !kept.isEmpty { try await write(entry.op, entity, ids: [id], kept, to: &builder, at: place) }
        }
        if !plain.isEmpty, !values.isEmpty { try await write(entry.op, entity, ids: plain, values, to: &builder, at: place) }
    }

    /// Sets `values` on `ids`: an update of those that exist; for an upsert, an object made
    /// from the values when it does not exist.
    private func write(_ op: SyncEntry.Operation, _ entity: String, ids: [DatabaseValue], _ values: [String: DatabaseValue],
                       to builder: inout PullBuilder, at place: String) async throws {
        guard op == .upsert, let id = ids.first else {
            builder.changes.updateAll(entity: entity, ids: ids, set: values)
            return
        }
        let exists: Bool
        if let known = builder.exists[entity]?[id] {
            exists = known
        } else {
            exists = try await storedValues(entity, id, []) != nil
        }
        if exists {
            builder.changes.updateAll(entity: entity, ids: [id], set: values)
        } else {
            do {
                builder.changes.upsert(try store.makeObject(entity: entity, id: id, values: values))
            } catch {
                throw SyncError(.invalidData, "\(place): the values do not make a \(entity) \(id)", underlying: "\(error)")
            }
        }
        builder.exists[entity, default: [:]][id] = true
    }

    /// The stored values of `attributes` of one object, or nil when it is not stored.
    func storedValues(_ entity: String, _ id: DatabaseValue, _ attributes: [String]) async throws -> [String: DatabaseValue]? {
        do {
            return try await store.attributeValues(of: entity, ids: [id], attributes: attributes)[id]
        } catch {
            throw SyncError.wrapping(error, doing: "reading \(entity) \(id)")
        }
    }
}
