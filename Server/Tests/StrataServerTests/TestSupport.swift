import Foundation
import Logging
import PostgresNIO
import StrataSyncWire
@testable import StrataServer

/// How much longer than their stated bound the tests' hang detectors wait (STRATA_TEST_WAIT_SCALE).
let waitScale = Double(ProcessInfo.processInfo.environment["STRATA_TEST_WAIT_SCALE"] ?? "") ?? 1

/// Seeded randomness; the seed is printed so a failure can be replayed with STRATA_TEST_SEED.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(test: String) {
        let seed = UInt64(ProcessInfo.processInfo.environment["STRATA_TEST_SEED"] ?? "")
            ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("\(test): seed \(seed) (replay with STRATA_TEST_SEED=\(seed))")
        state = seed
    }

    mutating func next() -> UInt64 { // SplitMix64
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Runs `body` with a connection pool on `url`, stopped afterwards.
func withClient<Result: Sendable>(_ url: PostgresURL,
                                  _ body: @Sendable (PostgresClient) async throws -> Result) async throws -> Result {
    let client = PostgresClient(configuration: url.clientConfiguration(maximumConnections: 4))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

/// Creates users (and the tables, when the database is new) on `url`; returns their tokens.
func addUsers(_ names: [String], on url: PostgresURL) async throws -> [String] {
    try await withClient(url) { client in
        let directory = UserDirectory(client: client, logger: Logger(label: "test"))
        try await directory.prepare()
        var tokens: [String] = []
        for name in names { tokens.append(try await directory.addUser(name)) }
        return tokens
    }
}

/// A service instance running in this process on a free loopback port.
final class RunningServer: Sendable {
    let port: Int
    /// The instance's long-poll waiters, which a test watches to know a pull is parked.
    let notifier: ChangeNotifier
    private let task: Task<Void, any Error>

    /// Starts an instance on `url`, listening on `port` (0: a free one).
    static func start(_ url: PostgresURL, limits: SyncLimits = SyncLimits(),
                      logRetention: Duration = .seconds(86400), port: Int = 0) async throws -> RunningServer {
        var logger = Logger(label: "strata-server-test")
        logger.logLevel = .warning
        let configuration = SyncServerConfiguration(postgres: url, port: port, limits: limits, logRetention: logRetention,
                                                    pruneInterval: .seconds(3600), maximumConnections: 8)
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let server = SyncServer(configuration: configuration, logger: logger)
        let task = Task {
            defer { continuation.finish() }
            try await server.run(gracefulShutdown: false) { continuation.yield($0) }
        }
        for await port in ports { return RunningServer(port: port, notifier: server.notifier, task: task) }
        try await task.value
        throw ClusterError("the server stopped before it listened")
    }

    private init(port: Int, notifier: ChangeNotifier, task: Task<Void, any Error>) {
        self.port = port
        self.notifier = notifier
        self.task = task
    }

    /// Returns once `count` pulls wait on this instance; fails after 30 s (a hang detector).
    func waitForWaiters(_ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(30 * waitScale)
        while await notifier.waiterCount < count {
            guard ContinuousClock.now < deadline else { throw ClusterError("no pull started waiting within 30 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Cancels the server and waits until it stopped.
    func stop() async {
        task.cancel()
        _ = await task.result
    }
}
