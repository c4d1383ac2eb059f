import Logging
import PostgresNIO
import StrataSyncWire

/// Users and their tokens. A token is 32 random bytes in hex, shown once when it is made; the
/// database keeps only its SHA-256 (PostgreSQL's `sha256`), so a stolen database holds no token.
public struct UserDirectory: Sendable {
    let client: PostgresClient
    let logger: Logger

    /// A directory on `client` (whose `run()` is running).
    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Creates the tables if they are missing (the same migration `serve` runs).
    public func prepare() async throws {
        try await Migration.run(client, logger: logger)
    }

    /// Creates a user, its space, and its first token.
    /// - Returns: the token, which is stored only as a hash.
    /// - Throws: ``SyncServerError`` when the name is taken.
    public func addUser(_ name: String) async throws -> String {
        let token = Self.makeToken()
        try await Database.transaction(client, logger: logger) { connection in
            let rows = try await connection.query(
                "INSERT INTO users (name) VALUES (\(name)) ON CONFLICT (name) DO NOTHING RETURNING id", logger: logger)
            guard let userID = try await rows.decode(Int64.self).first(where: { _ in true }) else {
                throw SyncServerError("a user named \(name) exists (add-token makes it another token)")
            }
            try await connection.query("INSERT INTO spaces (user_id) VALUES (\(userID))", logger: logger)
            try await Self.insert(token: token, userID: userID, on: connection, logger: logger)
        }
        return token
    }

    /// Makes another token for an existing user.
    /// - Throws: ``SyncServerError`` when there is no such user.
    public func addToken(user name: String) async throws -> String {
        let token = Self.makeToken()
        try await Database.transaction(client, logger: logger) { connection in
            let rows = try await connection.query("SELECT id FROM users WHERE name = \(name)", logger: logger)
            guard let userID = try await rows.decode(Int64.self).first(where: { _ in true }) else {
                throw SyncServerError("there is no user named \(name)")
            }
            try await Self.insert(token: token, userID: userID, on: connection, logger: logger)
        }
        return token
    }

    /// Disables or enables a user: a disabled user's tokens are refused with `forbidden`.
    public func setDisabled(_ disabled: Bool, user name: String) async throws {
        let rows = try await client.query(
            "UPDATE users SET disabled = \(disabled) WHERE name = \(name) RETURNING id", logger: logger)
        guard try await rows.decode(Int64.self).first(where: { _ in true }) != nil else {
            throw SyncServerError("there is no user named \(name)")
        }
    }

    /// The user a bearer token belongs to.
    /// - Throws: `unauthorized` for an unknown token, `forbidden` for a disabled user.
    func authenticate(token: String) async throws -> Int64 {
        let rows = try await client.query("""
            SELECT u.id, u.disabled FROM tokens t JOIN users u ON u.id = t.user_id
            WHERE t.hash = sha256(convert_to(\(token), 'UTF8'))
            """, logger: logger)
        guard let (userID, disabled) = try await rows.decode((Int64, Bool).self).first(where: { _ in true }) else {
            throw SyncProtocolError(.unauthorized, "the bearer token is not one this server issued")
        }
        guard !disabled else { throw SyncProtocolError(.forbidden, "the token's user is disabled") }
        return userID
    }

    static func insert(token: String, userID: Int64, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "INSERT INTO tokens (hash, user_id) VALUES (sha256(convert_to(\(token), 'UTF8')), \(userID))",
            logger: logger)
    }

    static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        return String((0..<64).map { _ in digits[Int(generator.next() % 16)] })
    }
}
