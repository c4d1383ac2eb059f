import Logging
import PostgresNIO
import ServiceLifecycle

/// Prunes the change log: per space, every entry up to the newest one older than the retention
/// goes, and the space's floor rises to it (cursors below the floor get `cursorExpired`).
/// Entries and floor change in one statement, so a pull sees both or neither.
struct LogPruner: Service {
    let client: PostgresClient
    let retention: Duration
    let interval: Duration
    let logger: Logger

    func run() async throws {
        // A graceful shutdown (SIGTERM) ends the loop as a cancellation does.
        await cancelWhenGracefulShutdown { await loop() }
    }

    private func loop() async {
        while !Task.isCancelled {
            do {
                try await prune()
            } catch {
                if !Task.isCancelled {
                    logger.warning("pruning the change log failed", metadata: ["error": "\(error)"])
                }
            }
            try? await Task.sleep(for: interval)
        }
    }

    func prune() async throws {
        let seconds = Double(retention.components.seconds) + Double(retention.components.attoseconds) / 1e18
        try await client.query("""
            WITH cut AS (
                SELECT user_id, max(seq) AS floor FROM changes
                WHERE created < now() - make_interval(secs => \(seconds)) GROUP BY user_id),
            pruned AS (DELETE FROM changes c USING cut WHERE c.user_id = cut.user_id AND c.seq <= cut.floor)
            UPDATE spaces s SET floor = GREATEST(s.floor, cut.floor) FROM cut WHERE s.user_id = cut.user_id
            """, logger: logger)
    }
}
