import StrataSyncWire

/// Applies a validated batch to the records it touches, in memory, by the protocol's rules, and
/// says what took effect. No database here: the push transaction loads the records, runs this,
/// and writes back ``changedKeys`` and ``effective``.
///
/// Rules: per record and attribute, the write with the greater (time, device) wins; a delete wins
/// over every update and is final (a later upsert of the ID is dropped: IDs are never reused);
/// an update skips IDs the space has no record of.
struct PushApplier {
    /// A record's place: entity and key text.
    struct RecordKey: Hashable, Sendable {
        var entity: String
        var id: String
    }

    /// The records the batch touches, as loaded (absent = no record), then as changed.
    private(set) var records: [RecordKey: StoredRecord]
    /// The records the batch changed or created.
    private(set) var changedKeys: Set<RecordKey> = []
    /// The entries that took effect, in order (what the log records and pulls return).
    private(set) var effective: [SyncEntry] = []

    init(records: [RecordKey: StoredRecord]) { self.records = records }

    mutating func apply(_ entry: SyncEntry, device: String) {
        let stamp = SyncStamp(time: entry.time, device: device)
        switch entry.op {
        case .upsert: upsert(entry, stamp: stamp)
        case .update: update(entry, stamp: stamp)
        case .delete: delete(entry, stamp: stamp)
        }
    }

    private mutating func upsert(_ entry: SyncEntry, stamp: SyncStamp) {
        guard let key = entry.ids.keys.first else { return }
        let place = RecordKey(entity: entry.entity, id: key.description)
        var record = records[place] ?? StoredRecord(fields: [:], tombstone: nil)
        guard !record.isDeleted else { return }
        let won = Self.write(entry.values, stamp: stamp, into: &record)
        guard !won.isEmpty else { return }
        records[place] = record
        changedKeys.insert(place)
        effective.append(made(entry, ids: [key], values: won, stamp: stamp))
    }

    private mutating func update(_ entry: SyncEntry, stamp: SyncStamp) {
        // IDs whose winning attributes are the same travel together: usually one entry for all.
        var groups: [[String]: [SyncKey]] = [:]
        var order: [[String]] = []
        for key in entry.ids.keys {
            let place = RecordKey(entity: entry.entity, id: key.description)
            guard var record = records[place], !record.isDeleted else { continue }
            let won = Self.write(entry.values, stamp: stamp, into: &record)
            guard !won.isEmpty else { continue }
            records[place] = record
            changedKeys.insert(place)
            let names = won.keys.sorted()
            if groups[names] == nil { order.append(names) }
            groups[names, default: []].append(key)
        }
        for names in order {
            let values = entry.values.filter { names.contains($0.key) }
            effective.append(made(entry, ids: groups[names] ?? [], values: values, stamp: stamp))
        }
    }

    private mutating func delete(_ entry: SyncEntry, stamp: SyncStamp) {
        var deleted: [SyncKey] = []
        for key in entry.ids.keys {
            let place = RecordKey(entity: entry.entity, id: key.description)
            guard records[place]?.isDeleted != true else { continue }
            // The tombstone is kept even for an ID never seen, so the ID is never reused.
            records[place] = StoredRecord(fields: [:], tombstone: stamp)
            changedKeys.insert(place)
            deleted.append(key)
        }
        if !deleted.isEmpty { effective.append(made(entry, ids: deleted, values: [:], stamp: stamp)) }
    }

    /// Writes each value whose stamp beats the attribute's; returns the values that won.
    private static func write(_ values: [String: SyncValue], stamp: SyncStamp,
                              into record: inout StoredRecord) -> [String: SyncValue] {
        var won: [String: SyncValue] = [:]
        for (name, value) in values where record.fields[name].map({ $0.stamp < stamp }) ?? true {
            record.fields[name] = StoredRecord.Field(v: value, t: stamp.time, d: stamp.device)
            won[name] = value
        }
        return won
    }

    private func made(_ entry: SyncEntry, ids: [SyncKey], values: [String: SyncValue], stamp: SyncStamp) -> SyncEntry {
        SyncEntry(entity: entry.entity, op: entry.op, ids: SyncIDSet(ids), values: values, time: stamp.time,
                  device: stamp.device)
    }
}
