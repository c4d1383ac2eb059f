import CSQLite

extension Connection {
    /// How many virtual-machine instructions run between two cancellation checks.
    static let cancellationCheckInterval: Int32 = 1_000

    /// While a check is set, SQLite asks it every ``cancellationCheckInterval`` instructions of
    /// any statement on this connection, and a `true` answer stops the statement with
    /// `SQLITE_INTERRUPT` (`sqlite3_progress_handler`). Unlike `sqlite3_interrupt`, a cancellation
    /// that arrives between two statements is not lost: the next one stops too. Pass nil to
    /// remove the check. Call on the connection's queue.
    func setCancellationCheck(_ isCancelled: (@Sendable () -> Bool)?) {
        cancellationBox?.release()
        cancellationBox = nil
        guard let isCancelled else {
            sqlite3_progress_handler(handle, 0, nil, nil)
            return
        }
        let box = Unmanaged.passRetained(CancellationBox(isCancelled))
        cancellationBox = box
        sqlite3_progress_handler(handle, Self.cancellationCheckInterval, { context in
            guard let context else { return 0 }
            return Unmanaged<CancellationBox>.fromOpaque(context).takeUnretainedValue().isCancelled() ? 1 : 0
        }, box.toOpaque())
    }
}

/// Holds the check for the C callback, which gets it as an unretained pointer; the connection
/// keeps the box retained until it replaces the check or closes.
final class CancellationBox {
    let isCancelled: @Sendable () -> Bool
    init(_ isCancelled: @escaping @Sendable () -> Bool) { self.isCancelled = isCancelled }
}
