import Foundation
@_spi(Sync) import Strata
import StrataSyncWire

extension SyncEngine {
    /// Pulls and applies pages until the server says no more follow; a first empty page may
    /// wait up to `wait` seconds on the server. A cursor the server no longer serves starts a
    /// full pull.
    func pullAll(wait: Int) async throws {
        var wait = min(max(wait, 0), 60)
        while true {
            let state = try await loadedState()
            if state.records != nil {
                try await fullPull()
                continue
            }
            let page: PullResponse
            do {
                page = try await transport.pull(after: state.cursor, limit: configuration.pullLimit, wait: wait)
            } catch let error as SyncError where error.protocolError?.error == .cursorExpired {
                try await fullPull()
                continue
            }
            wait = 0
            let applied = try await exclusively { try await apply(page) }
            if applied > 0 {
                emit(.pulled(changes: applied))
                await MainActor.run { [status] in status.pulledChanges += applied }
            }
            if !page.more { return }
        }
    }

    /// Applies one page through one change set that also stores the new cursor, clock and
    /// settled edits. Returns how many entries came from other devices.
    ///
    /// Entries are applied in the server's order, this device's own included: the server keeps
    /// per attribute the latest write, and its log lists what won, so only an attribute this
    /// device edited and has not yet pushed may differ (settled by the policy; against an own
    /// entry, the unpushed edit is the later one and stays).
    func apply(_ page: PullResponse) async throws -> Int {
        var state = try await loadedState()
        // A long poll that timed out changes nothing: no write.
        if page.changes.isEmpty, page.cursor == state.cursor { return 0 }
        // Saves accepted before the page commit first, so that the history shows them as
        // unpushed edits to settle (else the page, committed after them, would overwrite them).
        try? await store.persist()
        var builder = PullBuilder(edits: try await unpushedEdits(&state))
        var applied = 0
        for entry in page.changes {
            state.clock.observe(entry.time)
            // This device's own entries are applied too, as the server's effective changes: an
            // older entry of another device, applied before them on the server, must not stay.
            let isOwn = entry.device == state.device
            if !isOwn { applied += 1 }
            try await add(entry, to: &builder, state: &state, isOwn: isOwn)
        }
        state.cursor = page.cursor
        try await commit(builder.changes, state: state, keys: [.cursor, .clock, .overrides])
        for (conflict, outcome) in builder.conflicts { emit(.conflictResolved(conflict, outcome)) }
        return applied
    }

    /// This device's edits the server has not acknowledged: the history from the push position.
    func unpushedEdits(_ state: inout SyncState) async throws -> LocalEdits {
        LocalEdits(try await walkHistory(from: &state), schemas: schemas, overrides: state.overrides,
                   pending: state.pending?.request)
    }

    /// `value` as stored for `attribute` of `entity`, or an `.invalidData` error naming them.
    func storedValue(_ value: SyncValue, _ entity: String, _ attribute: AttributeSchema, at place: String) throws -> DatabaseValue {
        guard let stored = value.databaseValue(for: attribute) else {
            throw SyncError(.invalidData, "\(place): \(entity).\(attribute.name) is \(attribute.isOptional ? "optional " : "")"
                            + "\(attribute.type.rawValue); the server sent \(value.kindDescription)")
        }
        return stored
    }

    /// Settles a conflict by the policy: the value to store (nil: keep the local one) and the outcome.
    func settle(_ conflict: SyncConflict, deviceID: String) -> (store: DatabaseValue?, outcome: SyncConflictOutcome) {
        switch policy {
        case .serverWins:
            return (conflict.serverValue, .serverValueKept)
        case .deviceWins:
            return (nil, .localValueKept)
        case .lastWriterWins:
            let local = SyncStamp(time: conflict.localTime, device: deviceID)
            let server = SyncStamp(time: conflict.serverTime, device: conflict.serverDevice)
            return local > server ? (nil, .localValueKept) : (conflict.serverValue, .serverValueKept)
        case .custom(let resolve):
            let kept = resolve(conflict)
            if kept == conflict.serverValue { return (kept, .serverValueKept) }
            return kept == conflict.localValue ? (nil, .localValueKept) : (kept, .resolvedValueKept)
        }
    }
}
