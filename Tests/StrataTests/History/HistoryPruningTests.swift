import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Named consumers of the history and pruning by size and age, which never passes a consumer;
/// and the migration of a file written before the history existed.
@Suite struct HistoryPruningTests {
    private func floor(_ store: Store) async throws -> Int64 {
        try await store.read { db in try db.rows("SELECT value FROM strata_meta WHERE key = 'log_floor'") }
            .first.flatMap { Int64.fromDatabaseValue($0.values[0]) } ?? 0
    }

    private func commitFeeds(_ range: Range<Int>, _ store: Store) async throws -> [ChangeToken] {
        var tokens: [ChangeToken] = []
        for index in range {
            var changes = ChangeSet()
            changes.insert(Feed(id: Int64(index), name: "Feed \(index)"))
            try await store.submit(changes).committed()
            tokens.append(try await store.currentChangeToken())
        }
        return tokens
    }

    @Test func pruningBySizeNeverPassesARegisteredConsumer() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        var store = try await openStore(path) { $0.changeLogLimit = 5 }
        let start = try await store.registerHistoryConsumer("sync")
        #expect(try await store.registerHistoryConsumer("sync") == start, "registering again changes nothing")
        let tokens = try await commitFeeds(0..<20, store)
        #expect(try await floor(store) <= start.generation, "nothing the consumer has not read is pruned")
        var read = 0
        for try await _ in store.history(since: start) { read += 1 }
        #expect(read == 20)

        try await store.advanceHistoryConsumer("sync", to: tokens[9])
        try await store.advanceHistoryConsumer("sync", to: tokens[3])   // never backward
        try await store.close()
        // The position is in the file.
        store = try await openStore(path) { $0.changeLogLimit = 5 }
        #expect(try await store.historyConsumerPosition("sync") == tokens[9])
        try await store.pruneHistory()
        #expect(try await floor(store) == tokens[9].generation, "pruned up to the consumer, by size")

        try await store.removeHistoryConsumer("sync")
        #expect(try await store.historyConsumerPosition("sync") == nil)
        _ = try await commitFeeds(20..<21, store)
        let after = try await floor(store)
        #expect(after > tokens[9].generation && after < tokens[19].generation, "by size alone, the newest kept")
        await #expect(throws: StrataError.self) { try await store.advanceHistoryConsumer("gone", to: tokens[0]) }
        try await store.close()
    }

    @Test func pruningByAgeStopsAtAConsumer() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite")) { $0.historyMaximumAge = 3_600 }
        _ = try await store.registerHistoryConsumer("search-index")
        let tokens = try await commitFeeds(0..<5, store)
        // The first three were committed two hours ago.
        try await store.write { db in
            try db.execute("UPDATE strata_transactions SET committed_at = committed_at - 7200 WHERE generation <= ?",
                           [.integer(tokens[2].generation)])
        }
        try await store.advanceHistoryConsumer("search-index", to: tokens[1])
        try await store.pruneHistory()
        #expect(try await floor(store) == tokens[1].generation, "old, but the consumer had not read the third")

        try await store.advanceHistoryConsumer("search-index", to: tokens[4])
        try await store.pruneHistory()
        #expect(try await floor(store) == tokens[2].generation, "the young ones stay")
        var remaining: [ChangeToken] = []
        for try await transaction in store.history(since: tokens[2]) { remaining.append(transaction.token) }
        #expect(remaining == Array(tokens[3...]))
        try await store.close()
    }

    @Test func aFileWrittenBeforeTheHistoryIsMigrated() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        var store = try await openStore(path)
        _ = try await commitFeeds(0..<3, store)
        try await store.close()
        // Format 1: no transactions, no consumers, no changed attributes, no format recorded.
        do {
            let connection = try Connection(path: path, options: Connection.Options())
            defer { connection.close() }
            try connection.execute("""
                DROP TABLE strata_transactions; DROP TABLE strata_consumers;
                DROP TRIGGER strata_log_Feed_update;
                ALTER TABLE strata_changes DROP COLUMN attributes;
                DELETE FROM strata_meta WHERE key = 'format';
                INSERT INTO Feed (id, name) VALUES (10, 'Outside');
                """)
        }
        store = try await openStore(path)
        let format = try await store.read { db in try db.rows("SELECT value FROM strata_meta WHERE key = 'format'") }
        #expect(format.first?.values[0] == .integer(Int64(ChangeLog.format)))
        var transactions: [HistoryTransaction] = []
        for try await transaction in store.history(since: ChangeToken(generation: 0)) { transactions.append(transaction) }
        #expect(transactions.count == 1, "what format 1 logged is one outside transaction")
        #expect(transactions.first?.origin == .outside)
        #expect(transactions.first?.changes.flatMap(\.ids) == [0, 1, 2, 10].map { .integer($0) })

        try await store.write { db in try db.execute("UPDATE Feed SET name = 'Renamed' WHERE id = 10") }
        var last: HistoryTransaction?
        for try await transaction in store.history(since: transactions[0].token) { last = transaction }
        #expect(last?.changes.first?.changedAttributes == ["name"], "the update trigger was brought up to date")
        #expect(try StoreInspector(path: path).format == ChangeLog.format)
        try await store.close()
    }

    @Test func aFormatTwoFileGainsTheStoredValuesTable() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        var store = try await openStore(path)
        try await store.close()
        do {
            let connection = try Connection(path: path, options: Connection.Options())
            defer { connection.close() }
            try connection.execute("DROP TABLE strata_values; UPDATE strata_meta SET value = 2 WHERE key = 'format';")
        }
        store = try await openStore(path)
        var changes = ChangeSet()
        changes.setStoredValue(.integer(1), forKey: "k")
        try await store.submit(changes).committed()
        #expect(try await store.storedValue(forKey: "k") == .integer(1))
        #expect(try StoreInspector(path: path).format == 3)
        try await store.close()
    }
}
