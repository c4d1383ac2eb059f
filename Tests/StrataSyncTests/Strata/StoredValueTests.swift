import Foundation
@_spi(Sync) import Strata
import StrataTestSupport
import Testing

/// Stored values travel with a change set: committed with its rows, or not at all.
@Suite struct StoredValueTests {
    @Test func aValueIsCommittedWithItsChangeSetsRows() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("values.sqlite")
        let store = try await openSyncStore(path)
        var changes = ChangeSet()
        changes.insert(Article.make(1))
        changes.setStoredValue(.text("118"), forKey: "sync.cursor")
        changes.setStoredValue(.integer(7), forKey: "sync.batch")
        try await store.submit(changes).committed()
        #expect(try await store.storedValue(forKey: "sync.cursor") == .text("118"))
        #expect(try await store.storedValues(withPrefix: "sync.") == ["sync.cursor": .text("118"), "sync.batch": .integer(7)])
        #expect(try await store.storedValues(withPrefix: "sync_") == [:])   // `_` is no pattern
        try await store.close()

        // Reopened: still there, beside the row.
        let reopened = try await openSyncStore(path)
        #expect(try await reopened.storedValue(forKey: "sync.cursor") == .text("118"))
        #expect(try await reopened.fetch(Article.self, id: 1) == Article.make(1))
        var removal = ChangeSet()
        removal.removeStoredValue(forKey: "sync.cursor")
        #expect(!removal.isEmpty)
        try await reopened.submit(removal).committed()
        #expect(try await reopened.storedValue(forKey: "sync.cursor") == nil)
        #expect(try await reopened.storedValue(forKey: "sync.batch") == .integer(7))
        try await reopened.close()
    }

    @Test func aFailingChangeSetLeavesNeitherItsRowsNorItsValue() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openSyncStore(directory.path("values.sqlite"))
        var first = ChangeSet()
        first.insert(Article.make(1))
        first.setStoredValue(.text("1"), forKey: "sync.cursor")
        try await store.submit(first).committed()

        // Inserting an ID that exists fails the whole change set: its other insert and its value go too.
        var failing = ChangeSet()
        failing.insert(Article.make(2))
        failing.insert(Article.make(1, title: "again"))
        failing.setStoredValue(.text("2"), forKey: "sync.cursor")
        await #expect(throws: StrataError.self) { try await store.submit(failing).committed() }
        #expect(try await store.storedValue(forKey: "sync.cursor") == .text("1"))
        #expect(try await store.fetch(Article.self, id: 2) == nil)
        #expect(try await store.fetch(Article.self, id: 1) == Article.make(1))
        try await store.close()
    }

    @Test func valuesAreNotInTheHistory() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openSyncStore(directory.path("values.sqlite"))
        let start = try await store.currentChangeToken()
        var changes = ChangeSet()
        changes.setStoredValue(.integer(3), forKey: "bookmark")
        try await store.submit(changes).committed()
        var transactions = 0
        for try await _ in store.history(since: start) { transactions += 1 }
        #expect(transactions == 0)
        #expect(try await store.storedValue(forKey: "bookmark") == .integer(3))
        try await store.close()
    }
}
