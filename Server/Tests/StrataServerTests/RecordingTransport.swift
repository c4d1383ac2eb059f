import StrataSync
import StrataSyncWire

/// A transport that forwards to another (the real `HTTPSyncTransport`) and notes every push
/// the server accepted in a ``PushLog`` shared by the devices of a test.
struct RecordingTransport: SyncTransport {
    let base: any SyncTransport
    let log: PushLog

    func sendSchema(_ schema: SyncSchema) async throws -> SyncSchema { try await base.sendSchema(schema) }

    func push(_ request: PushRequest) async throws -> PushResponse {
        let response = try await base.push(request)
        await log.append(request)
        return response
    }

    func pull(after cursor: String, limit: Int, wait: Int) async throws -> PullResponse {
        try await base.pull(after: cursor, limit: limit, wait: wait)
    }

    func records(after position: String?, limit: Int) async throws -> RecordsResponse {
        try await base.records(after: position, limit: limit)
    }
}

/// The pushes of a test's devices in the order the server took them, and the state the
/// protocol's rule gives them: per attribute the greatest `(time, device)` wins, a delete wins
/// over every update and upsert, an update skips IDs with no record.
actor PushLog {
    private var pushes: [PushRequest] = []

    func append(_ request: PushRequest) { pushes.append(request) }

    /// The live notes the rule makes of every push, by ID.
    func model() -> [Int64: [String: SyncValue]] {
        var fields: [Int64: [String: (value: SyncValue, stamp: SyncStamp)]] = [:]
        var deleted: Set<Int64> = []
        for push in pushes {
            for entry in push.changes where entry.entity == "Note" {
                let stamp = SyncStamp(time: entry.time, device: push.device)
                for case .integer(let id) in entry.ids.keys {
                    switch entry.op {
                    case .delete:
                        deleted.insert(id)
                        fields[id] = [:]
                    case .upsert, .update:
                        if deleted.contains(id) || (entry.op == .update && fields[id] == nil) { continue }
                        var record = fields[id] ?? [:]
                        for (attribute, value) in entry.values where record[attribute].map({ $0.stamp < stamp }) ?? true {
                            record[attribute] = (value, stamp)
                        }
                        fields[id] = record
                    }
                }
            }
        }
        return fields.filter { !deleted.contains($0.key) }.mapValues { $0.mapValues(\.value) }
    }
}
