import Logging
import PostgresNIO

/// The service's one way to run a transaction: BEGIN, the body, COMMIT, or ROLLBACK when the body
/// throws — and the body's error is thrown as it is (postgres-nio's own helper wraps it), so a
/// refused request keeps its `SyncProtocolError`.
enum Database {
    /// How a transaction sees other transactions' commits.
    enum Isolation: String {
        /// Each statement sees what was committed before it started (PostgreSQL's default).
        case readCommitted = "READ COMMITTED"
        /// The whole transaction sees one snapshot.
        case repeatableRead = "REPEATABLE READ"
    }

    static func transaction<Result: Sendable>(
        _ client: PostgresClient, isolation: Isolation = .readCommitted, logger: Logger,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await client.withConnection { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL \(isolation.rawValue)"),
                                       logger: logger)
            let result: Result
            do {
                result = try await body(connection)
            } catch {
                // A failed rollback leaves the connection broken; the pool closes it, and the
                // server ends the transaction when the connection goes.
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
            try await connection.query("COMMIT", logger: logger)
            return result
        }
    }
}
