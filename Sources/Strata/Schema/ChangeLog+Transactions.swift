import Foundation

/// The history's transactions, its consumers and its pruning, kept beside the change log.
///
/// A transaction is a span of consecutive log entries: `strata_transactions` holds one row per
/// transaction, keyed by the generation of its last entry (its token), with `first`, the
/// generation it starts at, its author, its commit time and its origin. The writer records one
/// per change set that changed something, inside the change set's savepoint. Other writers'
/// entries (triggers) stay unclaimed until a store looks — at its next write transaction, after
/// ``Store/write(_:)``, at open — and claims them as one transaction of origin ``Origin/outside``
/// (``closeOutside(at:_:)``): SQL cannot see where another connection's transaction ends.
extension ChangeLog {
    static let transactionsTable = "strata_transactions"
    static let consumersTable = "strata_consumers"

    /// The bookkeeping format this version writes (`strata_meta.format`; absent means 1).
    /// 2: history transactions, consumers, and an update's changed attributes in the log.
    /// 3: stored values (`strata_values`, ``StoredValues``).
    static let format = 3

    /// Who wrote a transaction, as stored (`origin`).
    enum Origin: Int64 {
        /// A change set a store's writer committed; its author is known.
        case store = 0
        /// Rows written by anyone else, logged by the triggers; author unknown.
        case outside = 1
    }

    static let createHistorySQL = """
        CREATE TABLE IF NOT EXISTS \(transactionsTable) (
            generation INTEGER PRIMARY KEY, first INTEGER NOT NULL, author TEXT, committed_at REAL NOT NULL,
            origin INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS \(consumersTable) (name TEXT NOT NULL PRIMARY KEY, generation INTEGER NOT NULL);
        """

    /// Brings the bookkeeping to ``format`` inside the open's transaction: refuses a newer format,
    /// adds format 1's missing column and tables, claims the entries a format-1 file holds
    /// as one outside transaction (they carry no author), and adds format 3's stored values.
    /// - Throws: `.newerSchema` for a format this version does not know.
    static func migrateFormat(_ connection: Connection, at date: Double) throws {
        let recorded = Int.fromDatabaseValue(try connection.rows(
            "SELECT value FROM \(SchemaMigrator.metaTable) WHERE key = 'format'").first?.first ?? .null) ?? 1
        if recorded > format {
            throw StrataError(.newerSchema, "the store's bookkeeping format is \(recorded); this version of Strata "
                              + "writes format \(format) and older", path: connection.path)
        }
        guard recorded < format else { return }
        if recorded < 2 {
            let columns = try connection.rows("SELECT name FROM pragma_table_info('\(table)')").compactMap { String.fromDatabaseValue($0[0]) }
            if !columns.contains("attributes") { try connection.execute("ALTER TABLE \(table) ADD COLUMN attributes TEXT") }
            try connection.execute(createHistorySQL)
            try closeOutside(at: date, connection)
        }
        try connection.execute(StoredValues.createSQL)
        try connection.execute("INSERT INTO \(SchemaMigrator.metaTable) (key, value) VALUES ('format', ?) "
                               + "ON CONFLICT(key) DO UPDATE SET value = excluded.value", [.integer(Int64(format))])
    }

    /// The token of the newest transaction (0 when there is none).
    static func lastTransaction(_ connection: Connection) throws -> Int64 {
        Int64.fromDatabaseValue(try connection.rows("SELECT max(generation) FROM \(transactionsTable)").first?.first ?? .null) ?? 0
    }

    /// Records the entries after the newest transaction, through `last`, as one transaction.
    static func recordTransaction(through last: Int64, author: String?, origin: Origin, at date: Double,
                                  _ connection: Connection) throws {
        try connection.execute("""
            INSERT INTO \(transactionsTable) (generation, first, author, committed_at, origin)
            VALUES (?1, (SELECT coalesce(max(generation), 0) + 1 FROM \(transactionsTable)), ?2, ?3, ?4)
            """, [.integer(last), author.map(DatabaseValue.text) ?? .null, .real(date), .integer(origin.rawValue)])
    }

    /// Claims the entries no transaction holds yet — other writers' — as one outside transaction.
    /// Two indexed look-ups when there are none. Call in a write transaction, before the writer
    /// logs anything, so that they are not taken for its change set's.
    static func closeOutside(at date: Double, _ connection: Connection) throws {
        let newest = try generation(connection)
        guard newest > (try lastTransaction(connection)) else { return }
        try recordTransaction(through: newest, author: nil, origin: .outside, at: date, connection)
    }

    /// Throws `.historyExpired`, carrying the floor, when the history was pruned past `position`.
    static func checkNotExpired(_ position: Int64, _ connection: Connection, path: String) throws {
        let floor = try floor(connection)
        guard position < floor else { return }
        var error = StrataError(.historyExpired, "the history starts after generation \(floor); token \(position) is older "
                                + "(pruned): read everything again", path: path)
        error.historyFloor = floor
        throw error
    }

    /// A stored operation code as the public operation.
    static func operation(_ code: Int64) -> LoggedChange.Operation {
        code == insert ? .insert : (code == update ? .update : .delete)
    }

    // MARK: Consumers

    /// The lowest position of a registered consumer, if any: pruning never passes it.
    static func lowestConsumerPosition(_ connection: Connection) throws -> Int64? {
        Int64.fromDatabaseValue(try connection.rows("SELECT min(generation) FROM \(consumersTable)").first?.first ?? .null)
    }

    // MARK: Pruning

    /// What pruning keeps: at most `limit` entries (by generation), and transactions no older
    /// than `maximumAge` seconds; never what a registered consumer has not read, never the
    /// newest transaction.
    struct Retention {
        var limit: Int
        var maximumAge: TimeInterval?
    }

    /// The generation to prune through for `retention`, if past the floor: the newest
    /// transaction that both bounds let go, held back to the lowest consumer position and to
    /// the transaction before the newest. Called after a commit; `checksAge` says whether to
    /// look at commit times this time (a scan of the transactions to prune).
    static func pruningCut(_ retention: Retention, now: Double, checksAge: Bool, _ connection: Connection) throws -> Int64? {
        let newest = try generation(connection), floor = try floor(connection)
        var wanted: Int64 = 0
        // By size, in steps of a tenth of the bound, so that most commits do no extra work.
        let limit = Int64(max(1, retention.limit))
        if newest - floor > limit + limit / 10 { wanted = newest - limit }
        if checksAge, let age = retention.maximumAge {
            // Transactions are recorded in commit order: scan from the oldest to the first one
            // young enough, and prune what lies before it.
            let young = Int64.fromDatabaseValue(try connection.rows(
                "SELECT generation FROM \(transactionsTable) WHERE committed_at >= ? ORDER BY generation LIMIT 1",
                [.real(now - age)]).first?.first ?? .null)
            let old = try connection.rows("SELECT max(generation) FROM \(transactionsTable) WHERE generation < ?",
                                          [.integer(young ?? .max)]).first?.first
            wanted = max(wanted, Int64.fromDatabaseValue(old ?? .null) ?? 0)
        }
        guard wanted > floor else { return nil }
        if let consumer = try lowestConsumerPosition(connection) { wanted = min(wanted, consumer) }
        // Whole transactions only, and never the newest: the log's rowid must not start over.
        let bound = min(wanted, try lastTransaction(connection) - 1)
        let cut = Int64.fromDatabaseValue(try connection.rows(
            "SELECT max(generation) FROM \(transactionsTable) WHERE generation <= ?", [.integer(bound)]).first?.first ?? .null) ?? 0
        return cut > floor ? cut : nil
    }

    /// Deletes the entries and transactions through `cut` and raises the floor to it.
    static func prune(through cut: Int64, _ connection: Connection) throws {
        try connection.execute("DELETE FROM \(table) WHERE generation <= ?", [.integer(cut)])
        try connection.execute("DELETE FROM \(transactionsTable) WHERE generation <= ?", [.integer(cut)])
        try connection.execute("INSERT INTO \(SchemaMigrator.metaTable) (key, value) VALUES ('log_floor', ?) "
                               + "ON CONFLICT(key) DO UPDATE SET value = max(value, excluded.value)", [.integer(cut)])
    }
}
