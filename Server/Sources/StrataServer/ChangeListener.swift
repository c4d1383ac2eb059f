import Logging
import PostgresNIO
import ServiceLifecycle

/// The instance's one listening connection: `LISTEN strata_changes`, and each notification
/// (payload: the space's user ID) wakes that space's long polls. When the connection is lost it
/// reconnects after a second and wakes every waiter, since notifications sent meanwhile are gone.
struct ChangeListener: Service {
    let configuration: PostgresConnection.Configuration
    let notifier: ChangeNotifier
    let logger: Logger

    /// Returns when the task is cancelled or the service group shuts down gracefully; a lost
    /// connection is reconnected.
    func run() async throws {
        // A graceful shutdown (SIGTERM) ends the loop as a cancellation does.
        await cancelWhenGracefulShutdown { await loop() }
    }

    private func loop() async {
        var attempt = 0
        while !Task.isCancelled {
            attempt += 1
            do {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: attempt,
                                                                      logger: logger)
                do {
                    try await listen(on: connection)
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if !Task.isCancelled {
                    logger.warning("the listening connection failed; reconnecting in 1 s", metadata: ["error": "\(error)"])
                }
            }
            await notifier.signalAll()
            try? await Task.sleep(for: .seconds(1))
        }
    }

    /// Wakes every waiter once listening (what was sent before is unknown), then one space per
    /// notification, until the connection fails or the task is cancelled.
    private func listen(on connection: PostgresConnection) async throws {
        try await connection.listen(on: SpaceStore.channel) { notifications in
            await notifier.signalAll()
            for try await notification in notifications {
                if let user = Int64(notification.payload) { await notifier.signal(user) }
            }
        }
    }
}
