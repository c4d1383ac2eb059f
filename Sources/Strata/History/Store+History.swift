import Foundation

extension Store {
    /// The transactions committed after `token`, oldest first, read in pages of `pageSize`
    /// transactions: never the whole history in memory.
    ///
    /// ```swift
    /// var token = savedToken
    /// for try await transaction in store.history(since: token, entities: [Article.self],
    ///                                            excludingAuthors: ["sync"]) {
    ///     try await server.send(transaction.changes)
    ///     token = transaction.token
    /// }
    /// ```
    ///
    /// Each page is read on the store's queue (`SELECT … FROM strata_transactions … LIMIT
    /// pageSize`, then each transaction's change-log entries) after the store took in what other
    /// writers committed. Transactions not yet committed are not in it: ``persist()`` first to
    /// read your own saves.
    /// - Parameters:
    ///   - token: Where to start: a ``HistoryTransaction/token``, ``currentChangeToken()``, a
    ///     consumer's ``historyConsumerPosition(_:)``, or `ChangeToken(generation: 0)` for all.
    ///   - entities: Only these entities' changes, and only transactions that hold some; nil for all.
    ///   - authors: Only transactions by these authors; nil for any.
    ///   - excludingAuthors: Never transactions by these authors, for example your own sync's.
    ///     Outside transactions, which have no author, are never excluded by it.
    ///   - pageSize: How many transactions one read holds at most.
    /// - Returns: A sequence that throws ``StrataError/Code/historyExpired`` (with
    ///   ``StrataError/oldestAvailableToken``) when the history no longer reaches back to `token`.
    public func history(since token: ChangeToken, entities: [any Entity.Type]? = nil, authors: [String]? = nil,
                        excludingAuthors: [String] = [], pageSize: Int = 100) -> HistorySequence {
        HistorySequence(store: self, start: token, request: HistoryRequest(
            entities: entities.map { Set($0.map { $0.entityName }) }, authors: authors, excludedAuthors: excludingAuthors,
            pageSize: max(1, pageSize)))
    }

    /// One page of the history (``HistorySequence``), on the queue.
    func historyPage(after position: Int64, _ request: HistoryRequest) async throws -> HistoryPage {
        try await onQueue { writer in
            // What others committed becomes a transaction before it is read.
            self.takeInOutsideCommits(writer)
            return try request.page(after: position, writer.connection, path: self.path)
        }
    }

    // MARK: Consumers

    /// Registers a named reader of the history — `"sync"`, `"search-index"` — whose position is
    /// stored in the file: pruning never removes a transaction it has not read. Registering a
    /// name that exists changes nothing. Returns its position: for a new consumer, the newest
    /// committed transaction (it reads what comes after).
    ///
    /// ```swift
    /// let start = try await store.registerHistoryConsumer("sync")
    /// for try await transaction in store.history(since: start, excludingAuthors: ["sync"]) {
    ///     try await upload(transaction)
    ///     try await store.advanceHistoryConsumer("sync", to: transaction.token)
    /// }
    /// ```
    /// A consumer that is never advanced keeps the history growing: remove the ones you stop
    /// using (``removeHistoryConsumer(_:)``).
    @discardableResult
    public func registerHistoryConsumer(_ name: String) async throws -> ChangeToken {
        try await onQueue { writer in
            let connection = writer.connection
            try connection.execute("INSERT OR IGNORE INTO \(ChangeLog.consumersTable) (name, generation) VALUES (?, ?)",
                                   [.text(name), .integer(try ChangeLog.generation(connection))])
            return try self.consumerPosition(name, connection) ?? ChangeToken(generation: 0)
        }
    }

    /// Moves a consumer's position forward to `token` (never backward): the history up to it
    /// may now be pruned.
    /// - Throws: `.misuse` when no consumer has that name.
    public func advanceHistoryConsumer(_ name: String, to token: ChangeToken) async throws {
        try await onQueue { writer in
            try writer.connection.execute("UPDATE \(ChangeLog.consumersTable) SET generation = max(generation, ?) WHERE name = ?",
                                          [.integer(token.generation), .text(name)])
            guard writer.connection.changes > 0 else {
                throw StrataError(.misuse, "no history consumer is named \(name); register it first", path: self.path)
            }
        }
    }

    /// A consumer's stored position, or nil when no consumer has that name.
    public func historyConsumerPosition(_ name: String) async throws -> ChangeToken? {
        try await onQueue { writer in try self.consumerPosition(name, writer.connection) }
    }

    /// Forgets a consumer: the history it had not read may be pruned. Removing an unknown name
    /// changes nothing.
    public func removeHistoryConsumer(_ name: String) async throws {
        try await onQueue { writer in
            try writer.connection.execute("DELETE FROM \(ChangeLog.consumersTable) WHERE name = ?", [.text(name)])
        }
    }

    private func consumerPosition(_ name: String, _ connection: Connection) throws -> ChangeToken? {
        try connection.rows("SELECT generation FROM \(ChangeLog.consumersTable) WHERE name = ?", [.text(name)])
            .first.flatMap { Int64.fromDatabaseValue($0[0]) }.map(ChangeToken.init(generation:))
    }

    // MARK: Pruning

    /// Prunes the history now by ``StoreConfiguration/changeLogLimit`` and
    /// ``StoreConfiguration/historyMaximumAge``, never past a registered consumer's position
    /// nor the newest transaction. The store also prunes after commits; call this when the app
    /// goes to the background, for example.
    public func pruneHistory() async throws {
        try await onQueue { writer in
            try self.pruneHistory(writer.connection, now: Date().timeIntervalSince1970, checksAge: true)
        }
    }
}

extension StrataError {
    /// For ``Code/historyExpired``: the oldest token the history still reaches back to —
    /// reading from it is complete. Nil for other errors.
    public var oldestAvailableToken: ChangeToken? { historyFloor.map(ChangeToken.init(generation:)) }
}
