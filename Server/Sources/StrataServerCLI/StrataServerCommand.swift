import ArgumentParser
import Logging
import PostgresNIO
import StrataServer
import StrataSyncWire

/// `strata-server`: the Strata sync service and its user administration.
@main
struct StrataServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-server",
        abstract: "The Strata sync service: JSON over HTTP, PostgreSQL as the one source of truth.",
        subcommands: [Serve.self, AddUser.self, AddToken.self])
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve the sync protocol until SIGTERM or SIGINT.")

    @Option(help: "The PostgreSQL URL: postgres://user[:password]@host[:port]/database, or postgres:///database?host=/socket/dir")
    var postgres: String
    @Option(help: "The port to listen on.")
    var port: Int
    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"
    @Option(help: "The largest request body, in bytes.")
    var maxRequestBytes = SyncLimits().maxRequestBytes
    @Option(help: "The most entries one push may carry.")
    var maxBatchChanges = SyncLimits().maxEntries
    @Option(help: "How long the change log keeps an entry: a number with s, m, h or d (30d).")
    var logRetention = "30d"

    func run() async throws {
        guard let retention = Self.duration(logRetention) else {
            throw ValidationError("--log-retention \(logRetention) is not a number followed by s, m, h or d")
        }
        let logger = {
            var logger = Logger(label: "strata-server")
            logger.logLevel = .info
            return logger
        }()
        let configuration = SyncServerConfiguration(
            postgres: try PostgresURL(postgres), host: host, port: port,
            limits: SyncLimits(maxRequestBytes: maxRequestBytes, maxEntries: maxBatchChanges),
            logRetention: retention)
        try await SyncServer(configuration: configuration, logger: logger).run(gracefulShutdown: true) { port in
            logger.info("strata-server listening on \(host):\(port)")
        }
    }

    static func duration(_ text: String) -> Duration? {
        guard let unit = text.last, let count = Int64(text.dropLast()), count >= 0 else { return nil }
        let scale: Int64? = switch unit {
        case "s": 1
        case "m": 60
        case "h": 3600
        case "d": 86400
        default: nil
        }
        return scale.map { .seconds(count * $0) }
    }
}

struct AddUser: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a user and its space; print the user's token (shown once, stored only as a hash).")

    @Argument(help: "The user's name.")
    var name: String
    @Option(help: "The PostgreSQL URL.")
    var postgres: String

    func run() async throws {
        print(try await withDirectory(postgres) { try await $0.addUser(name) })
    }
}

struct AddToken: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make another token for an existing user and print it (shown once, stored only as a hash).")

    @Argument(help: "The user's name.")
    var name: String
    @Option(help: "The PostgreSQL URL.")
    var postgres: String

    func run() async throws {
        print(try await withDirectory(postgres) { try await $0.addToken(user: name) })
    }
}

/// Runs `body` with a user directory on a short-lived connection pool.
func withDirectory(_ url: String, _ body: @Sendable (UserDirectory) async throws -> String) async throws -> String {
    let client = PostgresClient(configuration: try PostgresURL(url).clientConfiguration(maximumConnections: 2))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await client.run() }
        defer { group.cancelAll() }
        let directory = UserDirectory(client: client, logger: Logger(label: "strata-server"))
        try await directory.prepare()
        return try await body(directory)
    }
}
