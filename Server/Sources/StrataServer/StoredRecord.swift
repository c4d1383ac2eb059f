import StrataSyncWire

/// One object's state as the `records` table holds it: per attribute the winning value and its
/// write stamp, or a tombstone.
struct StoredRecord: Sendable, Hashable {
    /// An attribute's winning write. Stored as `{"v": value, "t": time, "d": device}`.
    struct Field: Sendable, Hashable, Codable {
        var v: SyncValue
        var t: Int64
        var d: String

        var stamp: SyncStamp { SyncStamp(time: t, device: d) }
    }

    var fields: [String: Field]
    /// The delete's stamp, for a tombstone.
    var tombstone: SyncStamp?

    var isDeleted: Bool { tombstone != nil }

    /// The values a full pull shows.
    var values: [String: SyncValue] { fields.mapValues(\.v) }
}
