import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The history as a tool reads it without the app's types (``StoreInspector``): in pages, the
/// same transactions a store reads, and a watch that says when the file was written.
@Suite struct InspectorHistoryTests {
    @Test func pagesReadTheStoresTransactions() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await openStore(path)
        for index in 0..<250 {
            var changes = ChangeSet()
            changes.transactionAuthor = index % 2 == 0 ? "even" : nil
            changes.insert(Feed(id: Int64(index), name: "Feed \(index)"))
            try store.submit(changes)
        }
        try await store.persist()
        var expected: [HistoryTransaction] = []
        for try await transaction in store.history(since: ChangeToken(generation: 0)) { expected.append(transaction) }

        let inspector = try StoreInspector(path: path)
        var read: [HistoryTransaction] = [], sizes: [Int] = [], token = ChangeToken(generation: 0)
        while true {
            let page = try inspector.historyPage(since: token, limit: 100)
            read += page.transactions
            sizes.append(page.transactions.count)
            token = page.token
            if page.isLast { break }
        }
        #expect(sizes == [100, 100, 50])
        #expect(read == expected)
        #expect(token == expected.last?.token)
        let even = try inspector.historyPage(since: ChangeToken(generation: 0), authors: ["even"], limit: 1_000)
        #expect(even.transactions.count == 125)
        #expect(try inspector.historyPage(since: token).transactions.isEmpty)
        try await store.close()
    }

    /// What another connection committed while no store looked is one outside transaction
    /// (unclaimed: the inspector cannot write); reading on from its token reads only what came
    /// after, even once a store has claimed both as one.
    @Test func unclaimedEntriesAreOneOutsideTransaction() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        try await openStore(path).close()
        let other = try Connection(path: path, options: Connection.Options())
        try other.execute("INSERT INTO Feed (id, name) VALUES (1, 'one'), (2, 'two')")
        let inspector = try StoreInspector(path: path)
        let first = try inspector.historyPage(since: ChangeToken(generation: 0))
        #expect(first.transactions.map(\.origin) == [.outside])
        #expect(first.transactions.first?.changes.flatMap(\.ids) == [.integer(1), .integer(2)])
        try other.execute("INSERT INTO Feed (id, name) VALUES (3, 'three')")
        let store = try await openStore(path)
        let next = try inspector.historyPage(since: first.token)
        #expect(next.transactions.flatMap(\.changes).flatMap(\.ids) == [.integer(3)])
        #expect(try inspector.historyPage(since: first.token, entities: ["feed"]).transactions.count == 1)
        try await store.close()
        other.close()
    }

    @Test func aWatchIsCalledWhenAnotherConnectionCommits() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await openStore(path)
        let inspector = try StoreInspector(path: path)
        let written = DispatchSemaphore(value: 0)
        let watch = try inspector.watchWrites { written.signal() }
        defer { watch.cancel() }
        var changes = ChangeSet()
        changes.insert(Feed(id: 1, name: "one"))
        try await store.submit(changes).committed()
        #expect(await waitOff(written), "the watch saw the commit")
        #expect(try inspector.historyPage(since: ChangeToken(generation: 0)).transactions.count == 1)
        try await store.close()
    }
}
