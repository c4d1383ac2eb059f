import Foundation

extension Store {
    /// Runs a read on the store's queue so that cancelling the calling task stops it: a read not
    /// started yet is skipped, and a running one stops at its next cancellation check (every
    /// thousand SQLite instructions, see `Connection+Cancellation`). Either way the caller gets
    /// `CancellationError`.
    ///
    /// The check is installed only while this read's own `body` runs, so a cancellation can never
    /// stop a commit or another caller's statement. `prepare` runs first, outside it: work there
    /// (such as committing pending change sets) is never interrupted.
    func interruptibleOnQueue<T: Sendable>(prepare: @escaping @Sendable (Writer) throws -> Void = { _ in },
                                           _ body: @escaping @Sendable (Writer) throws -> T) async throws -> T {
        try Task.checkCancellation()
        let cancelled = Locked(false)
        return try await withTaskCancellationHandler {
            try await onQueue { writer in
                try prepare(writer)
                if cancelled.withLock({ $0 }) { throw CancellationError() }
                writer.connection.setCancellationCheck { cancelled.withLock { $0 } }
                let result = Result { try body(writer) }
                writer.connection.setCancellationCheck(nil)
                if case .failure(let error as StrataError) = result, error.code == .interrupted,
                   cancelled.withLock({ $0 }) {
                    throw CancellationError()
                }
                return try result.get()
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }
}
