import StrataSync

/// The first `count` events of `events` that `matching` accepts; fails after 30 s (a hang
/// detector), naming what it waited for.
func firstEvents(of events: AsyncStream<SyncEvent>, count: Int,
                 matching: @escaping @Sendable (SyncEvent) -> Bool) async throws -> [SyncEvent] {
    try await withThrowingTaskGroup(of: [SyncEvent].self) { group in
        group.addTask {
            var found: [SyncEvent] = []
            for await event in events where matching(event) {
                found.append(event)
                if found.count == count { break }
            }
            return found
        }
        group.addTask {
            try await Task.sleep(for: .seconds(30 * waitScale))
            throw ClusterError("fewer than \(count) awaited sync events within 30 s")
        }
        defer { group.cancelAll() }
        return try await group.next() ?? []
    }
}
