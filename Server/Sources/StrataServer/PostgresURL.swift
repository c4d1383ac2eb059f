import Foundation
import PostgresNIO

/// Where PostgreSQL is, read from a connection URL: `postgres://user[:password]@host[:port]/database`,
/// or `postgres:///database?host=/socket/directory&port=5432&user=name` for a Unix socket.
public struct PostgresURL: Sendable, Hashable {
    enum Endpoint: Sendable, Hashable {
        case tcp(host: String, port: Int)
        case socket(path: String)
    }

    let endpoint: Endpoint
    let user: String
    let password: String?
    let database: String?

    /// Reads a URL.
    /// - Throws: ``SyncServerError`` naming the part of the URL that is wrong.
    public init(_ text: String) throws {
        guard let url = URLComponents(string: text), let scheme = url.scheme,
              scheme == "postgres" || scheme == "postgresql" else {
            throw SyncServerError("the PostgreSQL URL \(text) does not start with postgres://")
        }
        let query = Dictionary((url.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        user = url.user ?? query["user"] ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        password = url.password ?? query["password"]
        let path = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
        database = path.isEmpty ? nil : path
        let port = url.port ?? Int(query["port"] ?? "") ?? 5432
        if let socketDirectory = query["host"], socketDirectory.hasPrefix("/") {
            endpoint = .socket(path: "\(socketDirectory)/.s.PGSQL.\(port)")
        } else if let host = url.host, !host.isEmpty {
            endpoint = .tcp(host: host, port: port)
        } else {
            throw SyncServerError("the PostgreSQL URL \(text) names no host (add one, or ?host=/socket/directory)")
        }
    }

    /// The configuration of a connection pool.
    public func clientConfiguration(maximumConnections: Int = 20) -> PostgresClient.Configuration {
        var configuration = switch endpoint {
        case .tcp(let host, let port):
            PostgresClient.Configuration(host: host, port: port, username: user, password: password,
                                         database: database, tls: .disable)
        case .socket(let path):
            PostgresClient.Configuration(unixSocketPath: path, username: user, password: password, database: database)
        }
        configuration.options.maximumConnections = maximumConnections
        return configuration
    }

    /// The configuration of one connection (the listening one).
    var connectionConfiguration: PostgresConnection.Configuration {
        switch endpoint {
        case .tcp(let host, let port):
            PostgresConnection.Configuration(host: host, port: port, username: user, password: password,
                                             database: database, tls: .disable)
        case .socket(let path):
            PostgresConnection.Configuration(unixSocketPath: path, username: user, password: password, database: database)
        }
    }
}
