import Foundation

extension Store {
    /// Runs `body` with direct access to the database, on the store's queue, after every change
    /// set submitted before the call has been committed. `body` runs in a deferred transaction,
    /// so all its statements see one snapshot of the file, even while another process writes;
    /// the transaction ends (rolled back if `body` throws) when `body` returns. Cancelling the
    /// calling task stops its SQL (SQLite progress-handler check) and throws `CancellationError`.
    ///
    /// ```swift
    /// let plan = try await store.read { db in try db.explain("SELECT * FROM articles WHERE feedID = 1") }
    /// ```
    /// - Throws: what `body` throws, or the transient failure that keeps earlier change sets pending;
    ///   ``StrataError/Code/misuse`` for transaction control in its SQL.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await interruptibleOnQueue(prepare: { _ in try self.drainBeforeDirectAccess() }) { writer in
            try writer.connection.inTransaction(.deferred) { try Database.scoped(writer.connection, body) }
        }
    }

    /// Runs `body` in an immediate transaction on the store's queue, after every change set
    /// submitted before the call has been committed. Committed when `body` returns, rolled back
    /// when it throws. Changes made here bypass change sets: once committed, they reach the
    /// contexts as one change whose origin is ``ContextChange/Origin/remote``, like another
    /// process's commit. Transaction control in its SQL fails with ``StrataError/Code/misuse``;
    /// nest with ``Database/inSavepoint(_:)``.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await onQueue { writer in
            try self.drainBeforeDirectAccess()
            let result = try writer.connection.inTransaction(.immediate) {
                // Its rows are one transaction of the history (origin outside: the triggers logged
                // them), apart from what others committed before.
                try ChangeLog.closeOutside(at: Date().timeIntervalSince1970, writer.connection)
                let result = try Database.scoped(writer.connection, body)
                try ChangeLog.closeOutside(at: Date().timeIntervalSince1970, writer.connection)
                return result
            }
            // What `body` wrote reaches the contexts as an outside change (the log's triggers saw it).
            self.takeInOutsideCommits(writer, ownConnectionWrote: true)
            return result
        }
    }

    private func drainBeforeDirectAccess() throws {
        drain()
        if let error = pipeline.withLock({ $0.pending.isEmpty ? nil : $0.transientError }) { throw error }
    }

    /// SQLite's plan for a query (`EXPLAIN QUERY PLAN`), to check that it uses an index.
    public func explain<E: Entity>(_ query: Query<E>) async throws -> [QueryPlanStep] {
        let resolved = try ResolvedQuery(query, schema: registry.schema(for: E.self))
        let (sql, arguments) = resolved.selectSQL()
        return try await onQueue { writer in try writer.connection.explainQueryPlan(sql, arguments) }
    }

    /// `PRAGMA integrity_check`: an empty array means the file is sound.
    public func integrityProblems() async throws -> [String] {
        try await onQueue { writer in try writer.connection.integrityProblems() }
    }

    /// Copies the WAL back into the database file (`PRAGMA wal_checkpoint`).
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) async throws -> CheckpointResult {
        try await onQueue { writer in try writer.connection.checkpoint(mode) }
    }

    /// Rebuilds the file without free pages (`VACUUM`), after committing everything pending.
    /// - Returns: the number of bytes the database file shrank by.
    @discardableResult
    public func vacuum() async throws -> Int64 {
        try await persist()
        return try await onQueue { writer in
            let before = try writer.connection.pageCounts()
            try writer.connection.execute("VACUUM")
            let after = try writer.connection.pageCounts()
            let pageSize = Int64.fromDatabaseValue(try writer.connection.rows("PRAGMA page_size", cached: false).first?.first ?? .null) ?? 4096
            return Int64(before.total - after.total) * pageSize
        }
    }

    /// Frees up to `pages` free pages (all when nil) when the store was created with
    /// ``StoreConfiguration/incrementalVacuum`` (`PRAGMA incremental_vacuum`).
    /// - Returns: the number of pages freed.
    @discardableResult
    public func incrementalVacuum(pages: Int? = nil) async throws -> Int {
        try await onQueue { writer in
            let before = try writer.connection.pageCounts().total
            try writer.connection.execute("PRAGMA incremental_vacuum" + (pages.map { "(\($0))" } ?? ""))
            return before - (try writer.connection.pageCounts().total)
        }
    }

    /// Registers a custom SQL function on the store's connection.
    public func register(_ function: SQLFunction) async throws {
        try await onQueue { writer in try writer.connection.register(function) }
    }

    // MARK: Bulk operations

    /// Sets attributes of every object whose ID is in `ids`, in one statement, without loading
    /// them. Ordered with, and visible to, everything submitted around it. `author` is the
    /// history's ``HistoryTransaction/author`` for it (``ChangeSet/transactionAuthor``).
    @discardableResult
    public func updateAll<E: Entity, C: Collection>(
        _ type: E.Type, ids: C, set values: [String: any DatabaseValueConvertible], author: String? = nil
    ) throws -> Submission where C.Element == E.ID {
        var changes = ChangeSet()
        changes.transactionAuthor = author
        changes.updateAll(type, ids: ids, set: values)
        return try submit(changes)
    }

    /// Sets attributes of every object matching `filter`, in one statement; `author` as for
    /// ``updateAll(_:ids:set:author:)``.
    @discardableResult
    public func updateAll<E: Entity>(
        _ type: E.Type, where filter: Filter, set values: [String: any DatabaseValueConvertible], author: String? = nil
    ) throws -> Submission {
        var changes = ChangeSet()
        changes.transactionAuthor = author
        changes.updateAll(type, where: filter, set: values)
        return try submit(changes)
    }

    /// Deletes every object whose ID is in `ids`, in one statement; IDs not in the store are
    /// skipped (a sync can apply a server's deletions whether or not it had the objects);
    /// `author` as for ``updateAll(_:ids:set:author:)``.
    @discardableResult
    public func deleteAll<E: Entity, C: Collection>(_ type: E.Type, ids: C, author: String? = nil) throws -> Submission
    where C.Element == E.ID {
        var changes = ChangeSet()
        changes.transactionAuthor = author
        changes.deleteAll(type, ids: ids)
        return try submit(changes)
    }

    /// Deletes every object matching `filter`, in one statement; `author` as for
    /// ``updateAll(_:ids:set:author:)``.
    @discardableResult
    public func deleteAll<E: Entity>(_ type: E.Type, where filter: Filter, author: String? = nil) throws -> Submission {
        var changes = ChangeSet()
        changes.transactionAuthor = author
        changes.deleteAll(type, where: filter)
        return try submit(changes)
    }
}
