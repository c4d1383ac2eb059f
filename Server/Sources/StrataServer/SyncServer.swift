import Foundation
import Hummingbird
import Logging
import PostgresNIO
import ServiceLifecycle
import StrataSyncWire

/// One instance of the sync service: an HTTP server whose every request reads and writes
/// PostgreSQL, plus the instance's listening connection (long polls) and the log pruner. Keeps no
/// state of its own, so any number of instances serve one database.
public struct SyncServer: Sendable {
    let configuration: SyncServerConfiguration
    let logger: Logger
    /// Wakes this instance's long polls.
    let notifier = ChangeNotifier()

    /// A server with this configuration.
    public init(configuration: SyncServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Creates the tables if missing, then serves until the task is cancelled or, when
    /// `gracefulShutdown` is set, until SIGTERM or SIGINT.
    /// - Parameter onRunning: called with the port once the server listens.
    public func run(gracefulShutdown: Bool, onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let client = PostgresClient(
            configuration: configuration.postgres.clientConfiguration(maximumConnections: configuration.maximumConnections),
            backgroundLogger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            try await Migration.run(client, logger: logger)
            let service = SyncService(
                store: SpaceStore(client: client, limits: configuration.limits, logger: logger),
                users: UserDirectory(client: client, logger: logger), notifier: notifier, limits: configuration.limits)
            let listener = ChangeListener(configuration: configuration.postgres.connectionConfiguration,
                                          notifier: notifier, logger: logger)
            let pruner = LogPruner(client: client, retention: configuration.logRetention,
                                   interval: configuration.pruneInterval, logger: logger)
            let app = Application(
                router: service.makeRouter(),
                configuration: .init(address: .hostname(configuration.host, port: configuration.port),
                                     serverName: "strata-server"),
                services: [listener, pruner],
                onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
                logger: logger)
            if gracefulShutdown {
                try await app.runService()
            } else {
                try await app.run()
            }
        }
    }
}
