import Foundation
import Strata
import StrataSyncWire

/// A place in the pushed history: every transaction through `token` is pushed, and the first
/// `units` of the next one (a unit is one ID of one change of a transaction, in order).
struct PushPosition: Codable, Hashable, Sendable {
    var token: Int64
    var units: Int

    static let start = PushPosition(token: 0, units: 0)
}

/// A batch fixed before its first send — its history range and the request made of it — and
/// re-sent as it is after any failure or restart until the server acknowledges it: a retry
/// never changes a batch's content.
struct PendingBatch: Codable, Hashable, Sendable {
    var start: PushPosition
    var end: PushPosition
    var request: PushRequest
    /// The clock after stamping the request's entries.
    var clock: Int64
    /// For a batch of the upload of every object (``UploadProgress``): where the upload goes on
    /// once it is acknowledged (nil inside: the upload is done). Nil for a batch of history.
    var upload: UploadStep?
}

/// Where an upload of every stored object stands: it replaces the history older than the
/// oldest transaction the store still holds, when the history was pruned past the push position.
struct UploadProgress: Codable, Hashable, Sendable {
    /// The entity being uploaded (the synced entities in name order).
    var entity: String
    /// The last key uploaded of it, if any.
    var after: SyncKey?
}

/// What an upload batch moves the upload to.
struct UploadStep: Codable, Hashable, Sendable {
    var next: UploadProgress?
}

/// A rule for pushing a local edit that a pull settled: up to the history transaction
/// `through`, the attribute of the object is not pushed (`restamp` nil: the server's value
/// won), or pushed with a time of at least `restamp` (the local value won against a later
/// server write).
struct EditOverride: Codable, Hashable, Sendable {
    var through: Int64
    var restamp: Int64?
}

/// Which attribute of which object an ``EditOverride`` is about.
struct AttributeRef: Codable, Hashable, Sendable {
    var entity: String
    var id: SyncKey
    var attribute: String
}

/// A full pull in progress: the cursor the first page of records gave, and the next page's position.
struct RecordsProgress: Codable, Hashable, Sendable {
    var cursor: String
    var next: String?
}

/// Everything the engine keeps in the store file (`Store.storedValue(forKey:)`, keys `strata.sync.*`).
/// Each field is written in the same transaction as what it describes: the cursor with the
/// changes pulled, the push position with nothing but the acknowledgment, the pending batch
/// before its first send.
struct SyncState: Sendable {
    var device: String
    var cursor: String = "0"
    var pushed: PushPosition = .start
    var nextBatch: Int64 = 1
    var pending: PendingBatch?
    var clock = HybridClock()
    var overrides: [AttributeRef: EditOverride] = [:]
    var records: RecordsProgress?
    var upload: UploadProgress?
    /// The schema last accepted by the server, as JSON.
    var sentSchema: String?

    static let prefix = "strata.sync."

    enum Key: String, CaseIterable {
        case device, cursor, pushed, nextBatch, pending, clock, overrides, records, upload, schema
        var name: String { SyncState.prefix + rawValue }
    }

    /// The state stored in `store`; a new device ID when none is stored (not yet written).
    static func load(from store: Store) async throws -> (state: SyncState, isNew: Bool) {
        let values = try await store.storedValues(withPrefix: prefix)
        func text(_ key: Key) -> String? { values[key.name].flatMap(String.fromDatabaseValue) }
        func json<T: Decodable>(_ key: Key, _ type: T.Type) throws -> T? {
            guard let text = text(key) else { return nil }
            do {
                return try JSONDecoder().decode(T.self, from: Data(text.utf8))
            } catch {
                throw SyncError(.store, "the stored sync state \(key.name) is not readable", underlying: "\(error)")
            }
        }
        guard let device = text(.device) else { return (SyncState(device: UUID().uuidString.lowercased()), true) }
        var state = SyncState(device: device)
        state.cursor = text(.cursor) ?? "0"
        state.pushed = try json(.pushed, PushPosition.self) ?? .start
        state.nextBatch = values[Key.nextBatch.name].flatMap(Int64.fromDatabaseValue) ?? 1
        state.pending = try json(.pending, PendingBatch.self)
        state.clock = HybridClock(last: values[Key.clock.name].flatMap(Int64.fromDatabaseValue) ?? 0)
        let overrides = try json(.overrides, [OverrideRow].self) ?? []
        state.overrides = Dictionary(overrides.map { ($0.ref, $0.rule) }, uniquingKeysWith: { $1 })
        state.records = try json(.records, RecordsProgress.self)
        state.upload = try json(.upload, UploadProgress.self)
        state.sentSchema = text(.schema)
        return (state, false)
    }

    private struct OverrideRow: Codable {
        var ref: AttributeRef
        var rule: EditOverride
    }

    /// Writes `keys` of this state into `changes`, so that they commit with it.
    func write(_ keys: [Key], into changes: inout ChangeSet) {
        for key in keys {
            let value: DatabaseValue?
            switch key {
            case .device: value = .text(device)
            case .cursor: value = .text(cursor)
            case .pushed: value = Self.json(pushed)
            case .nextBatch: value = .integer(nextBatch)
            case .pending: value = pending.map(Self.json)
            case .clock: value = .integer(clock.last)
            case .overrides:
                value = overrides.isEmpty ? nil : Self.json(overrides.map { OverrideRow(ref: $0.key, rule: $0.value) }
                    .sorted { ($0.ref.entity, $0.ref.id.description, $0.ref.attribute) < ($1.ref.entity, $1.ref.id.description, $1.ref.attribute) })
            case .records: value = records.map(Self.json)
            case .upload: value = upload.map(Self.json)
            case .schema: value = sentSchema.map(DatabaseValue.text)
            }
            if let value { changes.setStoredValue(value, forKey: key.name) } else { changes.removeStoredValue(forKey: key.name) }
        }
    }

    private static func json<T: Encodable>(_ value: T) -> DatabaseValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Encoding these plain structs cannot fail.
        return .text((try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null")
    }
}
