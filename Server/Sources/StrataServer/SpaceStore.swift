import Foundation
import Logging
import PostgresNIO
import StrataSyncWire

/// The spaces in PostgreSQL: the schema, the push transaction, pull pages and full-state pages.
/// Holds no state of its own; every instance of the service reads and writes the same rows.
struct SpaceStore: Sendable {
    let client: PostgresClient
    let limits: SyncLimits
    let logger: Logger

    /// The channel every push notifies, with the space's user ID as payload.
    static let channel = "strata_changes"

    // MARK: Schema

    func schema(user: Int64) async throws -> SyncSchema {
        let rows = try await client.query("SELECT schema::text FROM spaces WHERE user_id = \(user)", logger: logger)
        guard let text = try await rows.decode(String.self).first(where: { _ in true }) else {
            throw SyncProtocolError(.internalError, "user \(user) has no space row")
        }
        return try Self.decodeSchema(text)
    }

    /// Merges `schema` into the space's, under the space's lock.
    func putSchema(_ schema: SyncSchema, user: Int64) async throws -> SyncSchema {
        for (name, entity) in schema.entities where entity.keyType != .integer && entity.keyType != .text {
            throw SyncProtocolError(.typeMismatch,
                "entities.\(name).keyType: a key is integer or text, not \(entity.keyType.rawValue)")
        }
        return try await Database.transaction(client, logger: logger) { connection in
            let (_, stored) = try await lockSpace(user: user, on: connection)
            let merged = try stored.merging(schema)
            if merged != stored {
                let text = try Self.encode(merged)
                try await connection.query("UPDATE spaces SET schema = \(text)::jsonb WHERE user_id = \(user)",
                                           logger: logger)
            }
            return merged
        }
    }

    // MARK: Push

    /// The push transaction: lock the space, dedupe by batch, validate, apply, log, notify.
    func push(_ request: PushRequest, user: Int64) async throws -> PushResponse {
        try await Database.transaction(client, logger: logger) { connection in
            let (seq, schema) = try await lockSpace(user: user, on: connection)
            let lastBatch = try await registerDevice(request.device, user: user, on: connection)
            if request.batch <= lastBatch {
                return PushResponse(batch: request.batch, duplicate: true, cursor: String(seq))
            }
            guard request.batch == lastBatch + 1 else {
                throw SyncProtocolError(.batchGap,
                    "batch \(request.batch) of device \(request.device) follows batch \(lastBatch); expected \(lastBatch + 1)",
                    expected: lastBatch + 1)
            }
            // Every entry is checked before anything is written; values come back resolved to
            // their attributes' types.
            let valid = try request.validated(against: schema, limits: limits)
            var applier = PushApplier(records: try await loadRecords(touchedBy: valid.changes, user: user, on: connection))
            for entry in valid.changes { applier.apply(entry, device: request.device) }
            try await writeRecords(applier, user: user, on: connection)
            let newSeq = seq + Int64(applier.effective.count)
            try await appendLog(applier.effective, after: seq, user: user, on: connection)
            try await connection.query("""
                UPDATE devices SET last_batch = \(request.batch) WHERE device_id = \(request.device);
                """, logger: logger)
            if newSeq != seq {
                try await connection.query("UPDATE spaces SET seq = \(newSeq) WHERE user_id = \(user)", logger: logger)
                // Delivered at commit, to every instance's listening connection.
                try await connection.query("SELECT pg_notify(\(Self.channel), \(String(user)))", logger: logger)
            }
            return PushResponse(batch: request.batch, duplicate: false, cursor: String(newSeq))
        }
    }

    /// Locks the space's row until the transaction ends: pushes (and schema changes) of one space
    /// run one at a time, so sequence numbers commit in order.
    private func lockSpace(user: Int64, on connection: PostgresConnection) async throws -> (Int64, SyncSchema) {
        let rows = try await connection.query(
            "SELECT seq, schema::text FROM spaces WHERE user_id = \(user) FOR UPDATE", logger: logger)
        guard let (seq, text) = try await rows.decode((Int64, String).self).first(where: { _ in true }) else {
            throw SyncProtocolError(.internalError, "user \(user) has no space row")
        }
        return (seq, try Self.decodeSchema(text))
    }

    /// The device's last applied batch (0 for a new device, which is registered to the user).
    private func registerDevice(_ device: String, user: Int64, on connection: PostgresConnection) async throws -> Int64 {
        try await connection.query("""
            INSERT INTO devices (device_id, user_id) VALUES (\(device), \(user)) ON CONFLICT (device_id) DO NOTHING
            """, logger: logger)
        let rows = try await connection.query(
            "SELECT user_id, last_batch FROM devices WHERE device_id = \(device)", logger: logger)
        guard let (owner, lastBatch) = try await rows.decode((Int64, Int64).self).first(where: { _ in true }) else {
            throw SyncProtocolError(.internalError, "device \(device) vanished while registering")
        }
        guard owner == user else {
            throw SyncProtocolError(.forbidden, "device: \(device) is registered to another user")
        }
        return lastBatch
    }

    private func loadRecords(touchedBy changes: [SyncEntry], user: Int64,
                             on connection: PostgresConnection) async throws -> [PushApplier.RecordKey: StoredRecord] {
        var idsByEntity: [String: Set<String>] = [:]
        for entry in changes { idsByEntity[entry.entity, default: []].formUnion(entry.ids.keys.map(\.description)) }
        var records: [PushApplier.RecordKey: StoredRecord] = [:]
        for (entity, ids) in idsByEntity {
            let rows = try await connection.query("""
                SELECT id, fields::text, deleted, deleted_time, deleted_device FROM records
                WHERE user_id = \(user) AND entity = \(entity) AND id = ANY(\(Array(ids))::text[])
                """, logger: logger)
            for try await (id, fields, deleted, time, device) in rows.decode((String, String, Bool, Int64, String).self) {
                let record = StoredRecord(fields: try Self.decodeFields(fields),
                                          tombstone: deleted ? SyncStamp(time: time, device: device) : nil)
                records[PushApplier.RecordKey(entity: entity, id: id)] = record
            }
        }
        return records
    }

    private func writeRecords(_ applier: PushApplier, user: Int64, on connection: PostgresConnection) async throws {
        guard !applier.changedKeys.isEmpty else { return }
        var entities: [String] = [], ids: [String] = [], fields: [String] = []
        var deleted: [Bool] = [], times: [Int64] = [], devices: [String] = []
        for key in applier.changedKeys {
            guard let record = applier.records[key] else { continue }
            entities.append(key.entity)
            ids.append(key.id)
            fields.append(try Self.encode(record.fields))
            deleted.append(record.isDeleted)
            times.append(record.tombstone?.time ?? 0)
            devices.append(record.tombstone?.device ?? "")
        }
        try await connection.query("""
            INSERT INTO records (user_id, entity, id, fields, deleted, deleted_time, deleted_device)
            SELECT \(user), u.entity, u.id, u.fields::jsonb, u.deleted, u.time, u.device
            FROM unnest(\(entities)::text[], \(ids)::text[], \(fields)::text[], \(deleted)::boolean[],
                        \(times)::bigint[], \(devices)::text[]) AS u(entity, id, fields, deleted, time, device)
            ON CONFLICT (user_id, entity, id) DO UPDATE SET fields = excluded.fields, deleted = excluded.deleted,
                deleted_time = excluded.deleted_time, deleted_device = excluded.deleted_device
            """, logger: logger)
    }

    private func appendLog(_ entries: [SyncEntry], after seq: Int64, user: Int64,
                           on connection: PostgresConnection) async throws {
        guard let device = entries.first?.device else { return }
        var seqs: [Int64] = [], entities: [String] = [], ops: [String] = []
        var ids: [String] = [], values: [String] = [], times: [Int64] = []
        for (offset, entry) in entries.enumerated() {
            seqs.append(seq + 1 + Int64(offset))
            entities.append(entry.entity)
            ops.append(entry.op.rawValue)
            ids.append(try Self.encode(entry.ids))
            values.append(try Self.encode(entry.values))
            times.append(entry.time)
        }
        try await connection.query("""
            INSERT INTO changes (user_id, seq, entity, op, ids, vals, time, device)
            SELECT \(user), u.seq, u.entity, u.op, u.ids::jsonb, u.vals::jsonb, u.time, \(device)
            FROM unnest(\(seqs)::bigint[], \(entities)::text[], \(ops)::text[], \(ids)::text[], \(values)::text[],
                        \(times)::bigint[]) AS u(seq, entity, op, ids, vals, time)
            """, logger: logger)
    }

    // MARK: JSON in the database

    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decodeSchema(_ text: String) throws -> SyncSchema {
        try JSONDecoder().decode(SyncSchema.self, from: Data(text.utf8))
    }

    static func decodeFields(_ text: String) throws -> [String: StoredRecord.Field] {
        try JSONDecoder().decode([String: StoredRecord.Field].self, from: Data(text.utf8))
    }
}
