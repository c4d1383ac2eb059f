import Foundation
@_spi(Sync) import Strata
import StrataSyncWire

extension SyncEngine {
    /// The next upload batch — every stored object of the synced entities, in name and key
    /// order, as upserts of all its attributes, up to ``SyncConfiguration/maxEntriesPerPush``
    /// — and where the upload goes on after it (nil when it is done).
    func uploadEntries(from start: UploadProgress, clock: inout HybridClock) async throws -> ([SyncEntry], UploadProgress?) {
        let limit = max(1, configuration.maxEntriesPerPush)
        let names = schemas.keys.sorted()
        var entries: [SyncEntry] = []
        var progress: UploadProgress? = start
        let time = clock.stamp(wallMilliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
        while let current = progress, entries.count < limit {
            guard let schema = schemas[current.entity] else {
                progress = names.first { $0 > current.entity }.map { UploadProgress(entity: $0, after: nil) }
                continue
            }
            let wanted = limit - entries.count
            let keys = try await storedKeys(schema, after: current.after, limit: wanted)
            let values = try await store.attributeValues(of: schema.name, ids: keys)
            for id in keys {
                guard let key = SyncKey(id), let stored = values[id] else { continue }
                entries.append(SyncEntry(entity: schema.name, op: .upsert, ids: SyncIDSet([key]),
                                         values: stored.mapValues(SyncValue.init), time: time))
            }
            if keys.count < wanted {
                // The entity is done: the next one starts.
                progress = names.first { $0 > current.entity }.map { UploadProgress(entity: $0, after: nil) }
            } else {
                progress = UploadProgress(entity: current.entity, after: keys.last.flatMap(SyncKey.init))
            }
        }
        return (entries, progress)
    }

    /// Up to `limit` primary keys of `schema`'s objects after `after`, in key order.
    private func storedKeys(_ schema: EntitySchema, after: SyncKey?, limit: Int) async throws -> [DatabaseValue] {
        let key = "\"" + schema.primaryKey.column.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        let table = "\"" + schema.table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        let sql = "SELECT \(key) FROM \(table)" + (after == nil ? "" : " WHERE \(key) > ?") + " ORDER BY \(key) LIMIT \(limit)"
        let arguments = after.map { [$0.databaseValue] } ?? []
        do {
            return try await store.read { database in try database.rows(sql, arguments).map { $0.values[0] } }
        } catch {
            throw SyncError.wrapping(error, doing: "reading \(schema.name) keys to upload")
        }
    }
}
