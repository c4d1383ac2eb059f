import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Strata
import StrataSync

/// One device of an end-to-end test: a store file with its own `SyncEngine`, talking to an
/// in-process service instance through the real `HTTPSyncTransport`.
struct Device: Sendable {
    let name: String
    let path: String
    let store: Store
    let engine: SyncEngine

    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        return URLSession(configuration: configuration)
    }()

    /// Opens (or reopens) the store `name`.sqlite in `directory`, syncing with the instance on `port`;
    /// its accepted pushes are noted in `log` if given.
    static func open(_ directory: URL, _ name: String, port: Int, token: String,
                     policy: ConflictPolicy = .lastWriterWins, log: PushLog? = nil) async throws -> Device {
        let path = directory.appendingPathComponent("\(name).sqlite").path
        let store = try await Store.open(at: path, entities: [Note.self])
        let http = HTTPSyncTransport(server: URL(string: "http://127.0.0.1:\(port)")!, token: token, session: session)
        let transport: any SyncTransport = log.map { RecordingTransport(base: http, log: $0) } ?? http
        var configuration = SyncConfiguration()
        configuration.initialRetryDelay = 0.01
        configuration.pushDebounce = 0.01
        configuration.pullLimit = 3 // several pages per pull
        do {
            let engine = try SyncEngine(store: store, transport: transport, entities: [Note.self], policy: policy,
                                        configuration: configuration)
            return Device(name: name, path: path, store: store, engine: engine)
        } catch {
            try await store.close()
            throw error
        }
    }

    func save(_ build: (inout ChangeSet) -> Void) async throws {
        var changes = ChangeSet()
        build(&changes)
        try await store.submit(changes).committed()
    }

    /// Every note, by ID.
    func notes() async throws -> [Int64: Note] {
        Dictionary(uniqueKeysWithValues: try await store.fetch(Query(Note.self)).map { ($0.id, $0) })
    }

    func close() async throws {
        await engine.stop()
        try await store.close()
    }
}

/// A directory for one test's store files, removed by ``remove()``.
struct StoreDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

extension Fixture {
    /// Opens devices `names` in `directory` (a new one if nil, removed afterwards), device `i` on
    /// instance `instances[i]` (all on the first if nil) with the first user's token or `token`,
    /// runs `body`, and closes them however it ends.
    func withDevices(_ names: [String], in directory: StoreDirectory? = nil, instances: [Int]? = nil,
                     token: String? = nil, log: PushLog? = nil,
                     _ body: (StoreDirectory, [Device]) async throws -> Void) async throws {
        let folder = try directory ?? StoreDirectory()
        defer { if directory == nil { folder.remove() } }
        var devices: [Device] = []
        do {
            for (index, name) in names.enumerated() {
                devices.append(try await Device.open(folder.url, name, port: servers[instances?[index] ?? 0].port,
                                                     token: token ?? tokens[0], log: log))
            }
            try await body(folder, devices)
        } catch {
            for device in devices { try? await device.close() }
            throw error
        }
        for device in devices { try await device.close() }
    }
}
