import Foundation
import PostgresNIO
import StrataSyncWire

extension SpaceStore {
    /// One page of the change log after `cursor`. The space's floor and sequence are read in the
    /// same statement as the entries (one snapshot), so a prune that commits meanwhile cannot
    /// hide entries without also raising the floor this check sees.
    func pullPage(user: Int64, after cursor: Int64, limit: Int) async throws -> PullResponse {
        let rows = try await client.query("""
            SELECT s.seq, s.floor, c.seq, c.entity, c.op, c.ids::text, c.vals::text, c.time, c.device
            FROM spaces s LEFT JOIN LATERAL (
                SELECT * FROM changes WHERE user_id = s.user_id AND seq > \(cursor) ORDER BY seq LIMIT \(limit + 1)
            ) c ON TRUE
            WHERE s.user_id = \(user) ORDER BY c.seq
            """, logger: logger)
        var spaceSeq: Int64 = 0, floor: Int64 = 0
        var changes: [SyncEntry] = []
        let decoder = JSONDecoder()
        for try await row in rows {
            let (seq, rowFloor, entrySeq, entity, op, ids, values, time, device) = try row.decode(
                (Int64, Int64, Int64?, String?, String?, String?, String?, Int64?, String?).self)
            spaceSeq = seq
            floor = rowFloor
            guard let entrySeq, let entity, let op, let ids, let values, let time, let device else { continue }
            guard let operation = SyncEntry.Operation(rawValue: op) else {
                throw SyncProtocolError(.internalError, "log entry \(entrySeq) has the unknown operation \(op)")
            }
            changes.append(SyncEntry(
                entity: entity, op: operation, ids: try decoder.decode(SyncIDSet.self, from: Data(ids.utf8)),
                values: try decoder.decode([String: SyncValue].self, from: Data(values.utf8)), time: time,
                seq: entrySeq, device: device))
        }
        guard cursor >= floor else {
            throw SyncProtocolError(.cursorExpired,
                "after=\(cursor): the log keeps entries after \(floor) only; pull the full state from /v1/records",
                floor: String(floor))
        }
        guard cursor <= spaceSeq else {
            // A cursor from a database this one is not (restored from an older backup, say).
            throw SyncProtocolError(.cursorExpired,
                "after=\(cursor) is past the space's last entry \(spaceSeq); pull the full state from /v1/records",
                floor: String(floor))
        }
        let more = changes.count > limit
        if more { changes.removeLast(changes.count - limit) }
        return PullResponse(changes: changes, cursor: String(changes.last?.seq ?? cursor), more: more)
    }

    /// One page of the space's full state after `position`, read in one REPEATABLE READ snapshot
    /// together with the space's sequence at that snapshot (the cursor to pull from afterwards).
    func recordsPage(user: Int64, after position: RecordPosition?, limit: Int) async throws -> RecordsResponse {
        try await Database.transaction(client, isolation: .repeatableRead, logger: logger) { connection in
            let spaceRows = try await connection.query(
                "SELECT seq, schema::text FROM spaces WHERE user_id = \(user)", logger: logger)
            guard let (seq, schemaText) = try await spaceRows.decode((Int64, String).self).first(where: { _ in true }) else {
                throw SyncProtocolError(.internalError, "user \(user) has no space row")
            }
            let schema = try Self.decodeSchema(schemaText)
            let start = position ?? RecordPosition(entity: "", id: "")
            let rows = try await connection.query("""
                SELECT entity, id, fields::text, deleted FROM records
                WHERE user_id = \(user) AND (entity, id) > (\(start.entity), \(start.id))
                ORDER BY entity, id LIMIT \(limit + 1)
                """, logger: logger)
            var records: [RecordState] = []
            var last: RecordPosition?
            var more = false
            for try await (entity, id, fields, deleted) in rows.decode((String, String, String, Bool).self) {
                guard records.count < limit else {
                    more = true
                    continue
                }
                let key: SyncKey = schema.entities[entity]?.keyType == .integer ? Int64(id).map(SyncKey.integer) ?? .text(id) : .text(id)
                records.append(RecordState(entity: entity, id: key, values: try Self.decodeFields(fields).mapValues(\.v),
                                           deleted: deleted))
                last = RecordPosition(entity: entity, id: id)
            }
            let next = more ? last : nil
            return RecordsResponse(records: records, next: next?.description, cursor: String(seq))
        }
    }
}

/// Where a full-state page ends: `<entity>/<key>` (an entity name has no `/`).
struct RecordPosition: Sendable, Hashable, CustomStringConvertible {
    var entity: String
    var id: String

    init(entity: String, id: String) {
        self.entity = entity
        self.id = id
    }

    init?(_ text: String) {
        guard let slash = text.firstIndex(of: "/") else { return nil }
        entity = String(text[..<slash])
        id = String(text[text.index(after: slash)...])
    }

    var description: String { "\(entity)/\(id)" }
}
