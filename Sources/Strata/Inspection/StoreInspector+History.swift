import Foundation

extension StoreInspector {
    /// One page of the store's history after `token`: at most `limit` transactions, oldest
    /// first, by entity and author names — no entity types needed.
    ///
    /// ```swift
    /// let inspector = try StoreInspector(path: "reader.sqlite")
    /// let page = try inspector.historyPage(since: ChangeToken(generation: 0), entities: ["Article"])
    /// for transaction in page.transactions {
    ///     print(transaction.token.generation, transaction.author ?? "outside", transaction.changes)
    /// }
    /// ```
    ///
    /// The inspector cannot write, so it cannot claim what other writers committed since a store
    /// last looked, as a store does before it reads: a page that reaches the end holds those
    /// entries as one ``HistoryTransaction/Origin/outside`` transaction, its token the newest
    /// entry, dated when it was read. A store that later claims them (with any that came after)
    /// records one transaction; reading on from the token given here reads only what came after.
    ///
    /// The page is read in one read transaction (`BEGIN DEFERRED`; `SELECT … FROM
    /// strata_transactions … LIMIT limit`, then each transaction's change-log entries).
    /// - Parameters:
    ///   - token: Where to start: `ChangeToken(generation: 0)` for everything, or a
    ///     ``HistoryPage/token`` or ``HistoryTransaction/token`` read before.
    ///   - entities: Only these entities' changes (entity or table names, ignoring case), and
    ///     only transactions that hold some; nil for all.
    ///   - authors: Only transactions by these authors; nil for any.
    ///   - excludingAuthors: Never transactions by these authors (outside ones, which have no
    ///     author, are kept).
    ///   - limit: The most transactions the page reads.
    /// - Throws: ``StrataError/Code/historyExpired`` with ``StrataError/oldestAvailableToken``
    ///   when the history was pruned past `token`; `.unknownEntity`; `.incompatibleSchema` for a
    ///   store of bookkeeping format 1, which has no history (an app that opens it upgrades it).
    public func historyPage(since token: ChangeToken, entities: [String]? = nil, authors: [String]? = nil,
                            excludingAuthors: [String] = [], limit: Int = 100) throws -> HistoryPage {
        guard format >= 2 else {
            throw StrataError(.incompatibleSchema, "the store's bookkeeping format is \(format), which keeps no history "
                              + "transactions; opening it with Strata upgrades it to format \(ChangeLog.format)", path: path)
        }
        let request = HistoryRequest(entities: try entities.map { Set(try $0.map { try entity(named: $0).name }) },
                                     authors: authors, excludedAuthors: excludingAuthors, pageSize: max(1, limit),
                                     unclaimedDate: Date())
        return try connection.inTransaction(.deferred) {
            try request.page(after: token.generation, connection, path: path)
        }
    }
}
