import Foundation
@_spi(Sync) import Strata
import StrataSync
import StrataSyncWire
import StrataTestSupport

/// One device of a test: a store file, its engine, its transport to the shared server double.
struct TestDevice {
    let path: String
    let store: Store
    let engine: SyncEngine
    let transport: InMemoryTransport

    static func open(_ directory: TemporaryDirectory, _ name: String, server: InMemorySyncServer,
                     policy: ConflictPolicy = .default,
                     configure: (inout SyncConfiguration) -> Void = { _ in }) async throws -> TestDevice {
        let path = directory.path("\(name).sqlite")
        let store = try await openSyncStore(path)
        let transport = InMemoryTransport(server)
        var configuration = SyncConfiguration()
        configuration.initialRetryDelay = 0.01
        configuration.pushDebounce = 0.01
        configuration.pullWait = 1
        configure(&configuration)
        let engine = try SyncEngine(store: store, transport: transport, entities: [Article.self, Feed.self],
                                    policy: policy, configuration: configuration)
        return TestDevice(path: path, store: store, engine: engine, transport: transport)
    }

    /// The same file opened again with a new engine (a restart).
    func reopened(_ directory: TemporaryDirectory, _ name: String, server: InMemorySyncServer,
                  policy: ConflictPolicy = .default) async throws -> TestDevice {
        await engine.stop()
        try await store.close()
        return try await TestDevice.open(directory, name, server: server, policy: policy)
    }

    func save(_ build: (inout ChangeSet) -> Void) async throws {
        var changes = ChangeSet()
        build(&changes)
        try await store.submit(changes).committed()
    }

    func articles() async throws -> [Article] {
        try await store.fetch(Query(Article.self))
    }

    func close() async throws {
        await engine.stop()
        try await store.close()
    }
}

/// Waits until the wall clock's millisecond moves on, so that the next commit is dated after
/// the last one (history dates are what last-writer-wins compares). A bounded spin of at most
/// a few milliseconds; it orders timestamps, it does not wait for another task.
func nextMillisecond() {
    let start = Int64(Date().timeIntervalSince1970 * 1000)
    for _ in 0..<10_000_000 where Int64(Date().timeIntervalSince1970 * 1000) > start { return }
}
