import Foundation

/// What a read of the history asks for — its filters and its page size — and the reading of one
/// page, on the store's queue. A page is at most `pageSize` transactions (the SQL's `LIMIT`),
/// each with its entries: memory is bounded by the page, never by the history.
struct HistoryRequest: Sendable {
    /// Only entries of these entities (by name), and only transactions holding some; nil for all.
    var entities: Set<String>?
    /// Only transactions by these authors; nil for any.
    var authors: [String]?
    /// Never transactions by these authors (outside transactions, without one, are kept).
    var excludedAuthors: [String]
    var pageSize: Int

    /// Whether a page that reaches the end also holds the entries no transaction claims yet —
    /// what other writers committed since a store last looked — as one outside transaction,
    /// token the newest entry, dated `now`. For a reader that cannot claim them (``StoreInspector``
    /// is read-only); a store claims them before it reads. Reading on from that token is exact:
    /// a transaction that later claims them with more is read from the entry after it.
    var unclaimedDate: Date?

    /// One page of transactions after `position`: those the filters keep, the token the next
    /// page starts after, and whether the history ended within this page.
    /// - Throws: `.historyExpired` when the history was pruned past `position`.
    func page(after position: Int64, _ connection: Connection, path: String) throws -> HistoryPage {
        try ChangeLog.checkNotExpired(position, connection, path: path)
        var sql = "SELECT generation, first, author, committed_at, origin FROM \(ChangeLog.transactionsTable) WHERE generation > ?"
        var arguments: [DatabaseValue] = [.integer(position)]
        if let authors {
            sql += " AND author IN (" + authors.map { _ in "?" }.joined(separator: ", ") + ")"
            arguments += authors.map(DatabaseValue.text)
        }
        if !excludedAuthors.isEmpty {
            sql += " AND (author IS NULL OR author NOT IN (" + excludedAuthors.map { _ in "?" }.joined(separator: ", ") + "))"
            arguments += excludedAuthors.map(DatabaseValue.text)
        }
        sql += " ORDER BY generation LIMIT \(max(1, pageSize))"
        let rows = try connection.rows(sql, arguments)
        let isLast = rows.count < max(1, pageSize)
        var names: [Int64: String]?
        func entityNames() throws -> [Int64: String] {
            if let names { return names }
            var read: [Int64: String] = [:]
            for row in try connection.rows("SELECT rowid, name FROM \(SchemaMigrator.entitiesTable)") {
                if let code = Int64.fromDatabaseValue(row[0]), let name = String.fromDatabaseValue(row[1]) { read[code] = name }
            }
            names = read
            return read
        }
        var transactions: [HistoryTransaction] = []
        var reached = position
        for row in rows {
            guard let token = Int64.fromDatabaseValue(row[0]), let first = Int64.fromDatabaseValue(row[1]) else { continue }
            reached = token
            let changes = try entries(from: max(first, position + 1), through: token, names: try entityNames(), connection)
            if entities != nil, changes.isEmpty { continue }
            transactions.append(HistoryTransaction(
                token: ChangeToken(generation: token), author: String.fromDatabaseValue(row[2]),
                date: Date(timeIntervalSince1970: Double.fromDatabaseValue(row[3]) ?? 0),
                origin: Int64.fromDatabaseValue(row[4]) == ChangeLog.Origin.store.rawValue ? .store : .outside,
                changes: changes))
        }
        if isLast, let now = unclaimedDate, authors == nil {
            // The rows were read through the newest transaction: what follows it is unclaimed.
            let from = max(reached, try ChangeLog.lastTransaction(connection)), newest = try ChangeLog.generation(connection)
            if newest > from {
                reached = newest
                let changes = try entries(from: from + 1, through: newest, names: try entityNames(), connection)
                if entities == nil || !changes.isEmpty {
                    transactions.append(HistoryTransaction(token: ChangeToken(generation: newest), author: nil, date: now,
                                                           origin: .outside, changes: changes))
                }
            }
        }
        return HistoryPage(transactions: transactions, token: ChangeToken(generation: reached), isLast: isLast)
    }

    /// The log entries of one transaction, from `first` through `last`, the filter's entities only.
    private func entries(from first: Int64, through last: Int64, names: [Int64: String],
                         _ connection: Connection) throws -> [HistoryChange] {
        var changes: [HistoryChange] = []
        for row in try connection.rows("SELECT generation, entity, key, op, attributes FROM \(ChangeLog.table) "
                                       + "WHERE generation >= ? AND generation <= ? ORDER BY generation",
                                       [.integer(first), .integer(last)]) {
            guard let generation = Int64.fromDatabaseValue(row[0]), let code = Int64.fromDatabaseValue(row[1]),
                  let op = Int64.fromDatabaseValue(row[3]) else { continue }
            let entity = names[code] ?? "#\(code)"
            if let entities, !entities.contains(entity) { continue }
            let attributes = String.fromDatabaseValue(row[4]).map { $0.isEmpty ? [] : $0.split(separator: ",").map(String.init) } ?? []
            changes.append(HistoryChange(entity: entity, operation: ChangeLog.operation(op),
                                         ids: try ChangeLog.keys(of: row[2], generation: generation),
                                         changedAttributes: attributes, generation: generation))
        }
        return changes
    }
}
