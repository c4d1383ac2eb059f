/// One change in a push or a pull: an upsert of one object, an update of the same attributes
/// of many, or a deletion of many.
///
/// A pull's entries are what the server applied (``seq``, ``device`` set): only the keys and
/// attributes that won, so a device applies them in order.
public struct SyncEntry: Sendable, Hashable, Codable {
    /// What an entry does.
    public enum Operation: String, Sendable, Hashable, Codable {
        /// Creates the one object of ``SyncEntry/ids`` with ``SyncEntry/values``, or sets those
        /// attributes of it if it exists.
        case upsert
        /// Sets ``SyncEntry/values`` on every object of ``SyncEntry/ids`` that exists.
        case update
        /// Deletes every object of ``SyncEntry/ids``.
        case delete
    }

    /// The entity's name.
    public var entity: String
    /// What the entry does.
    public var op: Operation
    /// The objects.
    public var ids: SyncIDSet
    /// The attributes set, by name (empty for a deletion).
    public var values: [String: SyncValue]
    /// The write's hybrid logical time (``HybridClock``), in milliseconds.
    public var time: Int64
    /// In a pull: the server's sequence number of the entry.
    public var seq: Int64?
    /// In a pull: the device that pushed it.
    public var device: String?

    /// An entry to push.
    public init(entity: String, op: Operation, ids: SyncIDSet, values: [String: SyncValue] = [:], time: Int64,
                seq: Int64? = nil, device: String? = nil) {
        self.entity = entity
        self.op = op
        self.ids = ids
        self.values = values
        self.time = time
        self.seq = seq
        self.device = device
    }

    /// The entry's write stamp: what last-writer-wins compares.
    public var stamp: SyncStamp { SyncStamp(time: time, device: device ?? "") }

    private enum CodingKeys: String, CodingKey { case entity, op, ids, values, time, seq, device }

    /// Decodes an entry; `values` may be absent (a deletion).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        entity = try container.decode(String.self, forKey: .entity)
        op = try container.decode(Operation.self, forKey: .op)
        ids = try container.decode(SyncIDSet.self, forKey: .ids)
        values = try container.decodeIfPresent([String: SyncValue].self, forKey: .values) ?? [:]
        time = try container.decode(Int64.self, forKey: .time)
        seq = try container.decodeIfPresent(Int64.self, forKey: .seq)
        device = try container.decodeIfPresent(String.self, forKey: .device)
    }
}

/// The order of writes: the greater ``time`` wins, and between equal times the greater
/// ``device`` ID. Both the server (per attribute of a record) and a device (against its own
/// unpushed edits) decide last-writer-wins by it.
public struct SyncStamp: Sendable, Hashable, Comparable, Codable {
    /// The hybrid logical time in milliseconds.
    public var time: Int64
    /// The device that wrote.
    public var device: String

    /// A stamp.
    public init(time: Int64, device: String) {
        self.time = time
        self.device = device
    }

    /// Whether `lhs` was written before `rhs` in the protocol's order.
    public static func < (lhs: SyncStamp, rhs: SyncStamp) -> Bool {
        (lhs.time, lhs.device) < (rhs.time, rhs.device)
    }
}
