@_spi(Sync) import Strata
import StrataSyncWire

extension SyncEngine {
    /// Brings the store up to date from every object's state on the server, for a cursor the
    /// server no longer serves. Each page is applied with the progress stored in the same
    /// transaction; after the last page the cursor the first page gave is stored, and pulls go
    /// on from it (what changed meanwhile arrives again: applying it twice changes nothing).
    /// Unpushed local edits are kept: their attributes are not overwritten, objects deleted
    /// here stay deleted (their deletion is pushed).
    func fullPull() async throws {
        emit(.fullPullStarted)
        while true {
            let state = try await loadedState()
            let page = try await transport.records(after: state.records?.next, limit: configuration.recordsLimit)
            let isLast = try await exclusively { try await apply(page) }
            if isLast { return }
        }
    }

    /// Applies one page of records; returns whether it was the last.
    private func apply(_ page: RecordsResponse) async throws -> Bool {
        var state = try await loadedState()
        var builder = PullBuilder(edits: try await unpushedEdits(&state))
        for record in page.records {
            guard schemas[record.entity] != nil else { continue }
            let local = builder.edits.object(record.entity, record.id)
            if record.deleted {
                builder.changes.deleteAll(entity: record.entity, ids: [record.id.databaseValue])
                continue
            }
            if local?.isDeleted == true { continue }
            let values = record.values.filter { local?.attributes[$0.key] == nil }
            guard !values.isEmpty else { continue }
            try await add(SyncEntry(entity: record.entity, op: .upsert, ids: SyncIDSet([record.id]), values: values,
                                    time: 0, seq: nil, device: ""), to: &builder, state: &state)
        }
        let progress = state.records ?? RecordsProgress(cursor: page.cursor, next: nil)
        if let next = page.next {
            state.records = RecordsProgress(cursor: progress.cursor, next: next)
        } else {
            state.records = nil
            state.cursor = progress.cursor
        }
        try await commit(builder.changes, state: state, keys: [.records, .cursor, .overrides, .clock])
        let count = page.records.count
        if count > 0 {
            emit(.pulled(changes: count))
            await MainActor.run { [status] in status.pulledChanges += count }
        }
        return page.next == nil
    }
}
