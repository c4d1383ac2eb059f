/// The body of `POST /v1/push`: a device's numbered batch of entries.
public struct PushRequest: Sendable, Hashable, Codable {
    /// The device's ID (stable for the life of its store file).
    public var device: String
    /// The batch's number: 1, 2, 3… per device; a retry sends the same number and entries.
    public var batch: Int64
    /// The entries, in the order the device wrote them.
    public var changes: [SyncEntry]

    /// A batch.
    public init(device: String, batch: Int64, changes: [SyncEntry]) {
        self.device = device
        self.batch = batch
        self.changes = changes
    }
}

/// The answer to a push.
public struct PushResponse: Sendable, Hashable, Codable {
    /// The batch answered.
    public var batch: Int64
    /// True when the server had already applied this batch (a retry): nothing was applied now.
    public var duplicate: Bool
    /// The space's cursor after the batch.
    public var cursor: String

    /// An answer.
    public init(batch: Int64, duplicate: Bool, cursor: String) {
        self.batch = batch
        self.duplicate = duplicate
        self.cursor = cursor
    }
}

/// The answer to `GET /v1/pull`: the entries after the cursor, in the order the server applied them.
public struct PullResponse: Sendable, Hashable, Codable {
    /// The entries (``SyncEntry/seq`` and ``SyncEntry/device`` set).
    public var changes: [SyncEntry]
    /// Where the next pull starts.
    public var cursor: String
    /// Whether more entries follow at once.
    public var more: Bool

    /// A page.
    public init(changes: [SyncEntry], cursor: String, more: Bool) {
        self.changes = changes
        self.cursor = cursor
        self.more = more
    }
}

/// One object's whole state, in the answer to `GET /v1/records` (the full pull of a device
/// whose cursor expired).
public struct RecordState: Sendable, Hashable, Codable {
    /// The entity's name.
    public var entity: String
    /// The object's key.
    public var id: SyncKey
    /// Every attribute the server holds for it.
    public var values: [String: SyncValue]
    /// Whether the object is deleted (a tombstone: delete it locally).
    public var deleted: Bool

    /// A record.
    public init(entity: String, id: SyncKey, values: [String: SyncValue], deleted: Bool) {
        self.entity = entity
        self.id = id
        self.values = values
        self.deleted = deleted
    }
}

/// The answer to `GET /v1/records`.
public struct RecordsResponse: Sendable, Hashable, Codable {
    /// The records of this page.
    public var records: [RecordState]
    /// The position of the next page, or nil after the last.
    public var next: String?
    /// The cursor to pull from once every page is read.
    public var cursor: String

    /// A page.
    public init(records: [RecordState], next: String?, cursor: String) {
        self.records = records
        self.next = next
        self.cursor = cursor
    }
}
