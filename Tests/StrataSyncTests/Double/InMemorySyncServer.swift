import Foundation
import StrataSync
import StrataSyncWire

/// A test double of the sync service: the protocol's rules (sync-protocol v1) for one space,
/// in memory, in process — last-writer-wins per attribute by (time, device), deletes win,
/// batches deduplicated per device, effective changes logged with sequence numbers, expiry by a
/// floor, records for a full pull. Not the real service: the PostgreSQL end-to-end tests live
/// with the server (Server/).
actor InMemorySyncServer {
    struct Record {
        var values: [String: (value: SyncValue, stamp: SyncStamp)] = [:]
        var tombstone: SyncStamp?
    }

    private(set) var schema = SyncSchema(entities: [:])
    private(set) var records: [String: [SyncKey: Record]] = [:]
    private(set) var log: [SyncEntry] = []
    private(set) var lastBatch: [String: Int64] = [:]
    /// Every push request received, in order (duplicates included).
    private(set) var pushes: [PushRequest] = []
    /// The encoded size of every push received, in bytes.
    private(set) var pushSizes: [Int] = []
    private(set) var floor: Int64 = 0
    private var waiters: [UUID: CheckedContinuation<Void, Never>] = [:]

    var sequence: Int64 { log.last?.seq ?? floor }

    func sendSchema(_ sent: SyncSchema) throws -> SyncSchema {
        schema = try schema.merging(sent)
        return schema
    }

    func push(_ request: PushRequest) throws -> PushResponse {
        pushes.append(request)
        pushSizes.append((try? JSONEncoder().encode(request).count) ?? 0)
        let request = try request.validated(against: schema)
        let last = lastBatch[request.device] ?? 0
        if request.batch <= last { return PushResponse(batch: request.batch, duplicate: true, cursor: String(sequence)) }
        guard request.batch == last + 1 else {
            throw SyncProtocolError(.batchGap, "batch \(request.batch) after \(last)", expected: last + 1)
        }
        for entry in request.changes { apply(entry, device: request.device) }
        lastBatch[request.device] = request.batch
        for waiter in waiters.values { waiter.resume() }
        waiters = [:]
        return PushResponse(batch: request.batch, duplicate: false, cursor: String(sequence))
    }

    private func apply(_ entry: SyncEntry, device: String) {
        let stamp = SyncStamp(time: entry.time, device: device)
        switch entry.op {
        case .delete:
            var deleted: [SyncKey] = []
            for key in entry.ids.keys {
                var record = records[entry.entity]?[key] ?? Record()
                if record.tombstone == nil { deleted.append(key) }
                record.tombstone = max(record.tombstone ?? stamp, stamp)
                records[entry.entity, default: [:]][key] = record
            }
            if !deleted.isEmpty { append(SyncEntry(entity: entry.entity, op: .delete, ids: SyncIDSet(deleted), time: entry.time), device) }
        case .upsert, .update:
            // IDs grouped by the attributes that won, in order.
            var groups: [[String]: [SyncKey]] = [:]
            var order: [[String]] = []
            for key in entry.ids.keys {
                let existing = records[entry.entity]?[key]
                if existing?.tombstone != nil { continue }
                if existing == nil, entry.op == .update { continue }
                var record = existing ?? Record()
                var won: [String] = []
                for (name, value) in entry.values.sorted(by: { $0.key < $1.key }) {
                    if let current = record.values[name], current.stamp >= stamp { continue }
                    record.values[name] = (value, stamp)
                    won.append(name)
                }
                records[entry.entity, default: [:]][key] = record
                if won.isEmpty { continue }
                if groups[won] == nil { order.append(won) }
                groups[won, default: []].append(key)
            }
            for names in order {
                let values = entry.values.filter { names.contains($0.key) }
                append(SyncEntry(entity: entry.entity, op: entry.op, ids: SyncIDSet(groups[names] ?? []), values: values,
                                 time: entry.time), device)
            }
        }
    }

    private func append(_ entry: SyncEntry, _ device: String) {
        var entry = entry
        entry.seq = sequence + 1
        entry.device = device
        log.append(entry)
    }

    func pull(after cursor: String, limit: Int, wait: Int) async throws -> PullResponse {
        guard let after = Int64(cursor) else { throw SyncProtocolError(.malformed, "after: \(cursor) is not a cursor") }
        if after < floor {
            throw SyncProtocolError(.cursorExpired, "cursor \(after) is below the floor \(floor)", floor: String(floor))
        }
        if wait > 0, !log.contains(where: { $0.seq! > after }) {
            await waitForPush(seconds: wait)
        }
        let page = log.filter { $0.seq! > after }
        let taken = Array(page.prefix(limit))
        return PullResponse(changes: taken, cursor: taken.last.map { String($0.seq!) } ?? cursor, more: page.count > limit)
    }

    /// Waits until a push applies something or `seconds` pass.
    private func waitForPush(seconds: Int) async {
        let id = UUID()
        let timer = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(seconds) * 1_000_000_000)
            await self?.wake(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { waiters[id] = $0 }
        } onCancel: {
            Task { await self.wake(id) }
        }
        timer.cancel()
    }

    private func wake(_ id: UUID) { waiters.removeValue(forKey: id)?.resume() }

    /// Every record after `position` (`entity/key` order), a page at a time; the cursor is the
    /// sequence at the first page.
    func records(after position: String?, limit: Int) -> RecordsResponse {
        let all = records.flatMap { entity, keyed in keyed.map { (entity, $0.key, $0.value) } }
            .map { (position: "\($0.0)/\($0.1)", entity: $0.0, key: $0.1, record: $0.2) }
            .sorted { $0.position < $1.position }
        let after = all.filter { position == nil || $0.position > position! }
        let page = after.prefix(limit)
        return RecordsResponse(
            records: page.map { RecordState(entity: $0.entity, id: $0.key, values: $0.record.values.mapValues(\.value),
                                            deleted: $0.record.tombstone != nil) },
            next: after.count > limit ? page.last?.position : nil, cursor: String(sequence))
    }

    /// Changes the newest log entry.
    func replaceLast(_ change: (inout SyncEntry) -> Void) {
        guard !log.isEmpty else { return }
        change(&log[log.count - 1])
    }

    /// Drops the log through the current sequence: older cursors expire.
    func pruneLog() {
        floor = sequence
        log = []
    }

    /// The live objects' values, by entity and key: what every device should end up holding.
    func liveValues() -> [String: [SyncKey: [String: SyncValue]]] {
        records.mapValues { keyed in keyed.filter { $0.value.tombstone == nil }.mapValues { $0.values.mapValues(\.value) } }
    }
}

extension InMemorySyncServer {
    /// Replaces a value of the newest log entry (a server bug, a newer schema), to test what a
    /// device does with a change it cannot store.
    func corruptLastEntry(attribute: String, value: SyncValue) throws {
        replaceLast { $0.values[attribute] = value }
    }
}
