import Foundation
@_spi(Sync) import Strata
import StrataTestSupport
import Testing

/// What a sync engine needs from the store, by entity name: objects made from attribute values,
/// bulk updates and deletions by IDs, and the stored values of given attributes.
@Suite struct EntityValuesTests {
    @Test func anObjectIsMadeFromValuesByName() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openSyncStore(directory.path("s.sqlite"))
        let made = try store.makeObject(entity: "Article", id: .integer(42), values: [
            "title": .text("Hello"), "isRead": .integer(1), "isStarred": .integer(0),
        ])
        #expect(made as? Article == Article(id: 42, title: "Hello", isRead: true, isStarred: false, summary: nil))
        #expect(try store.entityType(named: "Feed") == Feed.self)

        // Attributes not given take what a migration gives existing rows: NULL, else the type's zero.
        let sparse = try store.makeObject(entity: "Article", id: .integer(1), values: ["title": .text("t")])
        #expect(sparse as? Article == Article(id: 1, title: "t", isRead: false, isStarred: false, summary: nil))
        // A value of the wrong type, an unknown attribute, an unknown entity: errors naming them.
        #expect { _ = try store.makeObject(entity: "Article", id: .integer(1), values: ["title": .integer(5)]) } throws: { error in
            let error = error as? StrataError
            return error?.entity == "Article" && error?.objectID == "1"
        }
        #expect { _ = try store.makeObject(entity: "Article", id: .integer(1), values: ["colour": .text("red")]) } throws: { error in
            (error as? StrataError)?.code == .unknownAttribute && (error as? StrataError)?.attribute == "colour"
        }
        #expect { _ = try store.makeObject(entity: "Nope", id: .integer(1), values: [:]) } throws: { error in
            (error as? StrataError)?.code == .unknownEntity
        }
        try await store.close()
    }

    @Test func updatesAndDeletionsByNameAndTheirValuesReadBack() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openSyncStore(directory.path("s.sqlite"))
        var inserts = ChangeSet()
        for id in Int64(1)...5 { inserts.insert(Article.make(id)) }
        inserts.insert(Feed(id: "f", name: "Feed"))
        try await store.submit(inserts).committed()

        var changes = ChangeSet()
        changes.transactionAuthor = "sync"
        changes.updateAll(entity: "Article", ids: [.integer(1), .integer(2), .integer(99)], set: ["isRead": .integer(1)])
        changes.deleteAll(entity: "Article", ids: [.integer(5), .integer(98)])
        changes.upsert(try store.makeObject(entity: "Article", id: .integer(6), values: [
            "title": .text("New"), "isRead": .integer(0), "isStarred": .integer(1)]))
        try await store.submit(changes).committed()

        let ids: [DatabaseValue] = (1...6).map { .integer($0) }
        let stored = try await store.attributeValues(of: "Article", ids: ids, attributes: ["isRead", "title"])
        #expect(Set(stored.keys) == Set([1, 2, 3, 4, 6].map { DatabaseValue.integer($0) }))
        #expect(stored[.integer(1)] == ["isRead": .integer(1), "title": .text("Title 1")])
        #expect(stored[.integer(3)]?["isRead"] == .integer(0))
        #expect(stored[.integer(6)] == ["isRead": .integer(0), "title": .text("New")])
        let all = try await store.attributeValues(of: "Feed", ids: [.text("f")])
        #expect(all == [.text("f"): ["name": .text("Feed")]])
        await #expect(throws: StrataError.self) {
            _ = try await store.attributeValues(of: "Article", ids: ids, attributes: ["colour"])
        }
        // A bulk update naming an unknown attribute is refused at submission, naming it.
        var bad = ChangeSet()
        bad.updateAll(entity: "Article", ids: [.integer(1)], set: ["colour": .text("red")])
        #expect { try store.submit(bad) } throws: { ($0 as? StrataError)?.attribute == "colour" }
        try await store.close()
    }

    @Test func aLargeReadIsChunkedUnderTheVariableLimit() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openSyncStore(directory.path("s.sqlite"))
        var inserts = ChangeSet()
        for id in Int64(0)..<40_000 { inserts.insert(Article.make(id)) }
        try await store.submit(inserts).committed()
        let stored = try await store.attributeValues(of: "Article", ids: (0..<40_000).map { .integer($0) }, attributes: ["isRead"])
        #expect(stored.count == 40_000)
        try await store.close()
    }
}
