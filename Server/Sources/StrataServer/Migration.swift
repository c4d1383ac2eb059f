import Logging
import PostgresNIO

/// Creates the service's tables. Idempotent, and safe when several instances start at once: the
/// statements run in one transaction under a transaction-level advisory lock.
enum Migration {
    /// An arbitrary constant naming the migration's advisory lock.
    static let lockKey: Int64 = 0x5354_5241_5441 // "STRATA"

    static let statements: [PostgresQuery] = [
        """
        CREATE TABLE IF NOT EXISTS users (
            id BIGSERIAL PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            disabled BOOLEAN NOT NULL DEFAULT FALSE,
            created TIMESTAMPTZ NOT NULL DEFAULT now())
        """,
        // Only a token's SHA-256 is stored; a request's token is hashed by PostgreSQL to look it up.
        """
        CREATE TABLE IF NOT EXISTS tokens (
            hash BYTEA PRIMARY KEY,
            user_id BIGINT NOT NULL REFERENCES users(id),
            created TIMESTAMPTZ NOT NULL DEFAULT now())
        """,
        // One row per space: its sequence (locked by every push), the log's floor, the schema.
        """
        CREATE TABLE IF NOT EXISTS spaces (
            user_id BIGINT PRIMARY KEY REFERENCES users(id),
            seq BIGINT NOT NULL DEFAULT 0,
            floor BIGINT NOT NULL DEFAULT 0,
            schema JSONB NOT NULL DEFAULT '{"entities": {}}')
        """,
        // Each object's state: per attribute {"v": value, "t": time, "d": device}; a tombstone
        // keeps its (time, device) and no attributes.
        """
        CREATE TABLE IF NOT EXISTS records (
            user_id BIGINT NOT NULL REFERENCES users(id),
            entity TEXT COLLATE "C" NOT NULL,
            id TEXT COLLATE "C" NOT NULL,
            fields JSONB NOT NULL,
            deleted BOOLEAN NOT NULL DEFAULT FALSE,
            deleted_time BIGINT NOT NULL DEFAULT 0,
            deleted_device TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (user_id, entity, id))
        """,
        // The change log: the effective entries, numbered by the space's sequence.
        """
        CREATE TABLE IF NOT EXISTS changes (
            user_id BIGINT NOT NULL REFERENCES users(id),
            seq BIGINT NOT NULL,
            entity TEXT NOT NULL,
            op TEXT NOT NULL,
            ids JSONB NOT NULL,
            vals JSONB NOT NULL,
            time BIGINT NOT NULL,
            device TEXT NOT NULL,
            created TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (user_id, seq))
        """,
        """
        CREATE TABLE IF NOT EXISTS devices (
            device_id TEXT PRIMARY KEY,
            user_id BIGINT NOT NULL REFERENCES users(id),
            last_batch BIGINT NOT NULL DEFAULT 0)
        """,
    ]

    /// Creates what is missing.
    static func run(_ client: PostgresClient, logger: Logger) async throws {
        try await Database.transaction(client, logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(lockKey))", logger: logger)
            for statement in statements {
                try await connection.query(statement, logger: logger)
            }
        }
    }
}
