import Foundation

extension StoreInspector {
    /// Checks the history's bookkeeping against the change log (``check(snapshot:)``'s `history`
    /// item):
    /// - each transaction of `strata_transactions` spans `first` through its token, in order and
    ///   without overlapping the one before; none lies at or below the log's floor (pruning
    ///   removes them with their entries), none ends after the newest entry (the next entries
    ///   would be taken for its), and each has a known origin;
    /// - every change-log entry above the floor, up to the newest transaction, belongs to a
    ///   transaction (the entries after it are what other writers committed since a store last
    ///   looked: a store claims them as its next transaction);
    /// - every consumer of `strata_consumers` stands between the floor and the newest generation.
    ///
    /// A store of bookkeeping format 1 has no history yet: it passes.
    func historyBookkeeping() throws -> CheckReport.Item {
        let name = CheckReport.Item.history
        guard format >= 2 else {
            return CheckReport.Item(name: name, detail: "none yet (bookkeeping format \(format): an app that opens "
                                    + "the store adds it)", problems: [])
        }
        let database = Database(connection: connection)
        let missing = try [ChangeLog.transactionsTable, ChangeLog.consumersTable].filter { try !database.tableExists($0) }
        guard missing.isEmpty else {
            return CheckReport.Item(name: name, detail: "", problems: missing.map {
                "table \($0) is missing, though the store's bookkeeping format is \(format)" })
        }
        let range = try changeLog()
        let newest = max(range.newest ?? range.floor, range.floor)
        var problems = try transactionProblems(floor: range.floor, newest: newest)
        problems += try unclaimedEntries(floor: range.floor)
        problems += try consumerProblems(floor: range.floor, newest: newest)
        let transactions = try count("SELECT count(*) FROM \(ChangeLog.transactionsTable)")
        let consumers = try count("SELECT count(*) FROM \(ChangeLog.consumersTable)")
        let detail = Self.counted(transactions, "transaction") + " \(transactions == 1 ? "covers" : "cover") the log through "
            + "generation \(try count("SELECT coalesce(max(generation), 0) FROM \(ChangeLog.transactionsTable)")), "
            + Self.counted(consumers, "consumer") + " within it"
        return CheckReport.Item(name: name, detail: detail, problems: problems)
    }

    /// Transactions out of order, overlapping, left below the floor, past the newest entry, or of
    /// an unknown origin: one problem per transaction (the first few of each kind).
    private func transactionProblems(floor: Int64, newest: Int64) throws -> [String] {
        var problems: [String] = []
        let table = ChangeLog.transactionsTable
        // Each transaction beside the token of the one before it (`lag`: SQLite 3.25).
        for row in try connection.rows("""
            SELECT generation, first, previous FROM (
                SELECT generation, first, lag(generation) OVER (ORDER BY generation) AS previous FROM \(table))
            WHERE first > generation OR first <= previous ORDER BY generation LIMIT \(Self.listedProblems)
            """, cached: false) {
            let token = Int64.fromDatabaseValue(row[0]) ?? 0, first = Int64.fromDatabaseValue(row[1]) ?? 0
            if first > token {
                problems.append("transaction \(token) starts after it ends (first \(first))")
            } else if let previous = Int64.fromDatabaseValue(row[2]) {
                problems.append("transaction \(token) (generations \(first)…\(token)) overlaps transaction \(previous)")
            }
        }
        let stale = try count("SELECT count(*) FROM \(table) WHERE generation <= ?", [.integer(floor)])
        if stale > 0 {
            problems.append("\(Self.counted(stale, "transaction")) at or below the floor \(floor) "
                            + "\(stale == 1 ? "was" : "were") not pruned")
        }
        for row in try connection.rows("SELECT generation FROM \(table) WHERE generation > ? ORDER BY generation LIMIT \(Self.listedProblems)",
                                       [.integer(newest)], cached: false) {
            problems.append("transaction \(Int64.fromDatabaseValue(row[0]) ?? 0) ends after the newest generation \(newest): "
                            + "the next changes would be taken for its")
        }
        let origins = ChangeLog.Origin.store.rawValue, outside = ChangeLog.Origin.outside.rawValue
        let unknown = try count("SELECT count(*) FROM \(table) WHERE origin NOT IN (?, ?)", [.integer(origins), .integer(outside)])
        if unknown > 0 {
            problems.append("\(Self.counted(unknown, "transaction")) \(unknown == 1 ? "has" : "have") an unknown origin code")
        }
        return problems
    }

    /// Entries above the floor, up to the newest transaction, that no transaction spans: the
    /// history reads past them (they are in no transaction's range).
    private func unclaimedEntries(floor: Int64) throws -> [String] {
        let table = ChangeLog.table, transactions = ChangeLog.transactionsTable
        // An entry belongs to the first transaction ending at or after it, if that one starts at
        // or before it (the transactions are ordered and apart: checked above).
        let row = try connection.rows("""
            SELECT count(*), min(c.generation) FROM \(table) AS c
            WHERE c.generation > ?1 AND c.generation <= (SELECT coalesce(max(generation), 0) FROM \(transactions))
            AND coalesce((SELECT t.first FROM \(transactions) AS t WHERE t.generation >= c.generation
                          ORDER BY t.generation LIMIT 1), c.generation + 1) > c.generation
            """, [.integer(floor)], cached: false).first
        let count = Int64.fromDatabaseValue(row?[0] ?? .null) ?? 0
        guard count > 0 else { return [] }
        return ["\(Self.counted(count, "change-log entry", "change-log entries")) "
                + "\(count == 1 ? "belongs" : "belong") to no transaction (the first is generation "
                + "\(Int64.fromDatabaseValue(row?[1] ?? .null) ?? 0)): the history skips \(count == 1 ? "it" : "them")"]
    }

    /// Consumers whose position lies past the newest generation or below the floor.
    private func consumerProblems(floor: Int64, newest: Int64) throws -> [String] {
        var problems: [String] = []
        for row in try connection.rows("SELECT name, generation FROM \(ChangeLog.consumersTable) WHERE generation > ? OR generation < ? "
                                       + "ORDER BY name LIMIT \(Self.listedProblems)", [.integer(newest), .integer(floor)], cached: false) {
            let consumer = String.fromDatabaseValue(row[0]) ?? "?", position = Int64.fromDatabaseValue(row[1]) ?? 0
            problems.append(position > newest
                ? "consumer \(consumer) is at generation \(position), past the newest generation \(newest)"
                : "consumer \(consumer) is at generation \(position), below the floor \(floor): what it had not read was pruned")
        }
        return problems
    }

    /// How many problems of one kind a check lists (a damaged table could have millions).
    private static let listedProblems = 10

    /// `1 transaction`, `2 transactions`.
    private static func counted(_ count: Int64, _ singular: String, _ plural: String? = nil) -> String {
        "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
    }
}
