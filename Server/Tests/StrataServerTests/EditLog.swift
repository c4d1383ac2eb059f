import StrataSyncWire

/// What the devices of an end-to-end test did, from which the parts of the end state that do
/// not depend on settling a conflict follow: which notes exist (inserted, never deleted: a
/// delete wins over any update), and the attributes that only one device ever wrote (its last
/// value, whichever way the others were settled).
struct EditLog {
    private(set) var inserted: Set<Int64> = []
    private(set) var deleted: Set<Int64> = []
    /// Note → attribute → device → that device's last value.
    private var writes: [Int64: [String: [String: SyncValue]]] = [:]

    mutating func insert(_ note: Note, by device: String) {
        inserted.insert(note.id)
        write(note, by: device)
    }

    /// Every attribute of `note`, as a whole-object save writes them.
    mutating func write(_ note: Note, by device: String) {
        for (attribute, value) in note.syncValues { write(note.id, attribute, value, by: device) }
    }

    mutating func write(_ id: Int64, _ attribute: String, _ value: SyncValue, by device: String) {
        writes[id, default: [:]][attribute, default: [:]][device] = value
    }

    mutating func delete(_ id: Int64) { deleted.insert(id) }

    /// The notes that must exist at the end.
    var survivors: Set<Int64> { inserted.subtracting(deleted) }

    /// For each survivor, the attributes only one device wrote, with that device's last value.
    var uncontested: [Int64: [String: SyncValue]] {
        var result: [Int64: [String: SyncValue]] = [:]
        for id in survivors {
            for (attribute, byDevice) in writes[id] ?? [:] where byDevice.count == 1 {
                result[id, default: [:]][attribute] = byDevice.values.first
            }
        }
        return result
    }
}
