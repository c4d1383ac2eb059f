import Foundation
@_spi(Sync) import Strata
import StrataSyncWire

extension SyncEngine {
    /// Pushes batches until the history holds nothing more to push.
    func pushAll() async throws {
        // The history holds committed transactions only: let what was saved before the call commit.
        try? await store.persist()
        while try await exclusively({ try await pushOne() }) {}
    }

    /// Pushes one batch — the pending one, or a new one fixed first — and stores the
    /// acknowledgment. Returns whether there may be more to push.
    func pushOne() async throws -> Bool {
        var state = try await loadedState()
        try await sendSchemaIfChanged(&state)
        let pending: PendingBatch
        if let stored = state.pending {
            pending = stored
        } else if let upload = state.upload {
            var clock = state.clock
            let (changes, next) = try await uploadEntries(from: upload, clock: &clock)
            pending = PendingBatch(start: state.pushed, end: state.pushed,
                                   request: PushRequest(device: state.device, batch: state.nextBatch, changes: changes),
                                   clock: clock.last, upload: UploadStep(next: next))
            state.pending = pending
            state.nextBatch += 1
            try await commit(ChangeSet(), state: state, keys: [.pending, .nextBatch])
        } else {
            var budget = PushBudget(maxEntries: max(1, configuration.maxEntriesPerPush),
                                    maxIDsPerEntry: max(1, configuration.maxIDsPerEntry))
            var walk = try await walkHistory(from: &state, budget: budget)
            if state.upload != nil { return true }
            if walk.isEmpty {
                // Nothing to send; only the engine's own transactions were passed.
                if walk.end != state.pushed {
                    state.pushed = walk.end
                    try await commit(ChangeSet(), state: state, keys: [.pushed])
                    try await advanceConsumer(to: walk.end)
                }
                return false
            }
            // The batch — its number, range and content — is fixed, and stored, before it is first sent.
            var clock = state.clock
            var changes = try await entries(for: walk, clock: &clock, state: state)
            // Too large a body for the server: fewer entries, until one is left.
            while changes.count > 1, (try? JSONEncoder().encode(changes).count) ?? 0 > configuration.maxPushBytes {
                let longer = walk.end
                budget.maxEntries = max(1, min(budget.maxEntries, changes.count) / 2)
                walk = try await walkHistory(from: &state, budget: budget)
                clock = state.clock
                changes = try await entries(for: walk, clock: &clock, state: state)
                // One slice whose entries cannot be split further: sent as it is.
                if walk.end == longer { break }
            }
            pending = PendingBatch(start: state.pushed, end: walk.end,
                                   request: PushRequest(device: state.device, batch: state.nextBatch, changes: changes),
                                   clock: clock.last)
            state.pending = pending
            state.nextBatch += 1
            try await commit(ChangeSet(), state: state, keys: [.pending, .nextBatch])
        }
        _ = try await transport.push(pending.request)
        // Acknowledged (applied now, or before: a duplicate): the position moves past the range.
        state = try await loadedState()
        state.pushed = pending.end
        state.pending = nil
        state.clock.observe(pending.clock)
        state.overrides = state.overrides.filter { $0.value.through > pending.end.token }
        if let step = pending.upload { state.upload = step.next }
        try await commit(ChangeSet(), state: state, keys: [.pushed, .pending, .clock, .overrides, .upload])
        try await advanceConsumer(to: pending.end)
        let count = pending.request.changes.count
        emit(.pushed(changes: count))
        await MainActor.run { [status] in status.pushedChanges += count }
        return true
    }

    /// The history from the state's push position. When the store pruned it past that
    /// position, every stored object is uploaded instead (``UploadProgress``, stored with the
    /// push position moved to the oldest transaction kept) and the walk starts there.
    func walkHistory(from state: inout SyncState, budget: PushBudget? = nil) async throws -> HistoryWalk {
        do {
            do {
                return try await HistoryWalk.read(store, entities: entities, schemas: schemas, author: configuration.author,
                                                  from: state.pushed, budget: budget)
            } catch let error as StrataError where error.code == .historyExpired {
                state.upload = UploadProgress(entity: schemas.keys.sorted().first ?? "", after: nil)
                state.pushed = PushPosition(token: error.oldestAvailableToken?.generation ?? 0, units: 0)
                try await commit(ChangeSet(), state: state, keys: [.upload, .pushed])
                return try await HistoryWalk.read(store, entities: entities, schemas: schemas, author: configuration.author,
                                                  from: state.pushed, budget: budget)
            }
        } catch {
            throw SyncError.wrapping(error, doing: "reading the history to push")
        }
    }

    private func advanceConsumer(to position: PushPosition) async throws {
        do {
            try await store.advanceHistoryConsumer(Self.historyConsumer, to: ChangeToken(generation: position.token))
        } catch {
            throw SyncError.wrapping(error, doing: "advancing the sync's history consumer")
        }
    }

    /// Sends the schema of the synced entities when it differs from the one the server last accepted.
    func sendSchemaIfChanged(_ state: inout SyncState) async throws {
        let schema = SyncSchema(Array(schemas.values))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(schema), as: UTF8.self)
        guard state.sentSchema != text else { return }
        _ = try await transport.sendSchema(schema)
        state.sentSchema = text
        try await commit(ChangeSet(), state: state, keys: [.schema])
    }

    /// The entries of a walk's slices, with values read from the store now: an upsert per
    /// inserted object (every attribute), updates grouped by the values they set (a bulk update
    /// is one entry), a deletion per slice. Objects deleted since are left out; edits a pull
    /// settled against this device are left out or re-stamped (``EditOverride``).
    func entries(for walk: HistoryWalk, clock: inout HybridClock, state: SyncState) async throws -> [SyncEntry] {
        let values = try await currentValues(of: walk.slices)
        var entries: [SyncEntry] = []
        var stampedToken: Int64 = -1, time: Int64 = 0
        for slice in walk.slices {
            guard let schema = schemas[slice.entity] else { continue }
            // One time per transaction: its edits are one write.
            if slice.token != stampedToken {
                time = clock.stamp(wallMilliseconds: Int64((slice.date.timeIntervalSince1970 * 1000).rounded(.down)))
                stampedToken = slice.token
            }
            switch slice.operation {
            case .delete:
                let keys = slice.ids.compactMap(SyncKey.init)
                if !keys.isEmpty { entries.append(SyncEntry(entity: slice.entity, op: .delete, ids: SyncIDSet(keys), time: time)) }
            case .insert, .update:
                let names = slice.operation == .insert
                    ? schema.attributes.enumerated().filter { $0.offset != schema.primaryKeyIndex }.map(\.element.name)
                    : slice.attributes
                // IDs with the same values and time travel together.
                var groups: [GroupKey: [SyncKey]] = [:]
                var order: [GroupKey] = []
                for id in slice.ids {
                    guard let key = SyncKey(id), let stored = values[slice.entity]?[id] else { continue }
                    var sent: [String: SyncValue] = [:]
                    var entryTime = time
                    for name in names {
                        let rule = state.overrides[AttributeRef(entity: slice.entity, id: key, attribute: name)]
                        if let rule, rule.through >= slice.token {
                            guard let restamp = rule.restamp else { continue }
                            entryTime = max(entryTime, restamp)
                        }
                        sent[name] = SyncValue(stored[name] ?? .null)
                    }
                    if sent.isEmpty { continue }
                    if entryTime > time { clock.observe(entryTime) }
                    if slice.operation == .insert {
                        entries.append(SyncEntry(entity: slice.entity, op: .upsert, ids: SyncIDSet([key]), values: sent, time: entryTime))
                        continue
                    }
                    let group = GroupKey(values: sent, time: entryTime)
                    if groups[group] == nil { order.append(group) }
                    groups[group, default: []].append(key)
                }
                for group in order {
                    entries.append(SyncEntry(entity: slice.entity, op: .update, ids: SyncIDSet(groups[group] ?? []),
                                             values: group.values, time: group.time))
                }
            }
        }
        return entries
    }

    private struct GroupKey: Hashable {
        let values: [String: SyncValue]
        let time: Int64
    }

    /// The stored values of every object the slices insert or update, by entity and key.
    private func currentValues(of slices: [HistorySlice]) async throws -> [String: [DatabaseValue: [String: DatabaseValue]]] {
        var wanted: [String: Set<DatabaseValue>] = [:]
        for slice in slices where slice.operation != .delete { wanted[slice.entity, default: []].formUnion(slice.ids) }
        var values: [String: [DatabaseValue: [String: DatabaseValue]]] = [:]
        for (entity, ids) in wanted {
            do {
                values[entity] = try await store.attributeValues(of: entity, ids: Array(ids))
            } catch {
                throw SyncError.wrapping(error, doing: "reading \(entity) values to push")
            }
        }
        return values
    }
}
