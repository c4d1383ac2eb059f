import Foundation

/// How a transaction takes its lock: SQLite's `BEGIN DEFERRED`, `IMMEDIATE` or `EXCLUSIVE`.
public enum TransactionKind: String, Sendable {
    /// Takes locks when the first statement needs them (a read lock, then a write lock).
    case deferred = "DEFERRED"
    /// Takes the write lock at once, so the transaction cannot fail later for a busy database.
    case immediate = "IMMEDIATE"
    /// Like ``immediate``; in WAL mode readers in other connections still proceed.
    case exclusive = "EXCLUSIVE"
}

extension Connection {
    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// Nested calls become savepoints, so a transaction inside a transaction behaves.
    func inTransaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        if isInTransaction { return try inSavepoint(body) }
        try execute("BEGIN \(kind.rawValue) TRANSACTION")
        do {
            let result = try body()
            try execute("COMMIT TRANSACTION")
            return result
        } catch {
            rollbackIfNeeded()
            throw error
        }
    }

    /// Runs `body` in a savepoint: its changes are kept when it returns and undone when it
    /// throws, while the enclosing transaction (if any) goes on. Savepoints nest.
    func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "strata_savepoint_\(savepointDepth)"
        try execute("SAVEPOINT \(name)")
        do {
            let result = try body()
            try execute("RELEASE SAVEPOINT \(name)")
            return result
        } catch {
            // If SQLite already rolled the whole transaction back (it does for some I/O errors),
            // the savepoint is gone too and there is nothing left to undo.
            if isInTransaction {
                try? execute("ROLLBACK TRANSACTION TO SAVEPOINT \(name)")
                try? execute("RELEASE SAVEPOINT \(name)")
            }
            throw error
        }
    }

    func rollbackIfNeeded() {
        if isInTransaction { try? execute("ROLLBACK TRANSACTION") }
    }
}
