import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A link between a note and a tag: saved by workers, never listed by the UI.
private struct NoteTagLink: Entity, Equatable {
    var id: String
    var note: Int64
    var tag: Int64
    static let residency = Residency.notKept
}

/// A note, kept when read (the default).
private struct LinkedNote: Entity, Equatable {
    var id: Int64
    var title: String
}

/// What the main context keeps of each entity follows its ``Residency``, and so does its snapshot.
@MainActor
@Suite struct ResidencyTests {
    private static let entities: [any Entity.Type] = [NoteTagLink.self, LinkedNote.self, Feed.self]

    private func importByAWorker(_ store: Store, links: Int, notes: Int) async throws {
        let worker = store.makeWorkerContext(name: "import")
        for index in 0..<links { try await worker.insert(NoteTagLink(id: "l\(index)", note: Int64(index % notes), tag: 1)) }
        for index in 0..<notes { try await worker.insert(LinkedNote(id: Int64(index), title: "Note \(index)")) }
        try await worker.insert(Feed(id: 1, name: "Feed"))
        try await worker.save()
        try await store.persist()
        await store.mainContext.mergeAccepted()
    }

    @Test func theDeclarationsResolveToTheirResidency() throws {
        #expect(NoteTagLink.residency == .notKept && !NoteTagLink.isResident)
        #expect(LinkedNote.residency == .keptWhenRead)
        #expect(Feed.residency == .resident)
        let registry = try SchemaRegistry(Self.entities)
        #expect(try registry.schema(named: "NoteTagLink").residency == .notKept)
        #expect(try registry.schema(named: "Feed").isResident)
    }

    @Test func workerSavesRegisterOnlyWhatThePolicyKeeps() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.path("s.sqlite"), entities: Self.entities)
        let main = store.mainContext
        try await importByAWorker(store, links: 200, notes: 20)
        #expect(main.registeredCount(NoteTagLink.self) == 0, "links are not kept by the main context")
        #expect(main.registeredCount(LinkedNote.self) == 20)
        #expect(main.registeredCount(Feed.self) == 1)
        #expect(try await store.count(Query<NoteTagLink>()) == 200, "and they are all stored")

        // Fetched, they are held, and a later save of one updates the held copy.
        let fetched = try await main.fetch(Query<NoteTagLink>(where: Attribute("note") == Int64(3)))
        #expect(fetched.count == 10 && main.registeredCount(NoteTagLink.self) == 10)
        let worker = store.makeWorkerContext(name: "retag")
        _ = try await worker.fetch(Query<NoteTagLink>(where: Attribute("id") == "l3"))
        try await worker.update(NoteTagLink(id: "l3", note: 3, tag: 2))
        try await worker.insert(NoteTagLink(id: "l-new", note: 3, tag: 2))
        try await worker.save()
        await main.mergeAccepted()
        #expect(main.object(NoteTagLink.self, id: "l3")?.tag == 2)
        #expect(main.object(NoteTagLink.self, id: "l-new") == nil, "a new link saved elsewhere is not registered")
        try await store.close()
    }

    @Test func theSnapshotArchivesWhatThePolicyKeeps() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite"), snapshot = directory.path("s.snapshot")
        let store = try await Store.open(at: path, entities: Self.entities)
        _ = store.mainContext   // made before the import, so that it merges it
        try await importByAWorker(store, links: 50, notes: 5)
        _ = try await store.mainContext.fetch(Query<NoteTagLink>())   // held now, but not archived
        #expect(store.mainContext.registeredCount(NoteTagLink.self) == 50)
        #expect(store.mainContext.registeredCount(LinkedNote.self) == 5)
        try await store.mainContext.writeSnapshot(to: snapshot)
        try await store.close()

        let warm = try await Store.openWarm(at: path, snapshot: snapshot, entities: Self.entities)
        #expect(warm.outcome == .used)
        #expect(warm.mainContext.registeredCount(NoteTagLink.self) == 0)
        #expect(warm.mainContext.registeredCount(LinkedNote.self) == 5)
        #expect(warm.mainContext.registeredCount(Feed.self) == 1)
        try await warm.store.close()
    }
}
