import Foundation
@_spi(Sync) import Strata
import StrataSync
import StrataSyncWire
import StrataTestSupport
import Testing

/// Two devices editing the same objects offline, settled by the policy.
@Suite struct ConflictTests {
    /// Devices A and B share article 1; B edits `field` first, then A edits it and pushes;
    /// then B syncs. Returns B's article after it synced, and the server's value of `field`.
    private func editSameAttribute(policy: ConflictPolicy, bFirst: Bool = true) async throws
        -> (b: Article?, server: SyncValue?, a: Article?, events: [SyncEvent]) {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let a = try await TestDevice.open(directory, "a", server: server)
        let b = try await TestDevice.open(directory, "b", server: server, policy: policy)
        try await a.save { $0.insert(Article.make(1)) }
        try await a.engine.sync()
        try await b.engine.sync()
        let events = await b.engine.events()
        let collector = Task { var seen: [SyncEvent] = []; for await event in events { seen.append(event); if event == .idle { break } }; return seen }

        func edit(_ device: TestDevice, _ title: String) async throws {
            try await device.save { $0.updateAll(Article.self, ids: [1], set: ["title": title]) }
        }
        if bFirst {
            try await edit(b, "from B")
            nextMillisecond()
            try await edit(a, "from A")
        } else {
            try await edit(a, "from A")
            nextMillisecond()
            try await edit(b, "from B")
        }
        try await a.engine.sync()
        try await b.engine.sync()
        try await a.engine.sync()
        let seen = await collector.value
        let result = (try await b.store.fetch(Article.self, id: 1), await server.liveValues()["Article"]?[.integer(1)]?["title"],
                      try await a.store.fetch(Article.self, id: 1), seen)
        try await a.close()
        try await b.close()
        return result
    }

    @Test func lastWriterWinsKeepsTheLaterEdit() async throws {
        let later = try await editSameAttribute(policy: .lastWriterWins, bFirst: true)
        #expect(later.b?.title == "from A" && later.server == .text("from A") && later.a?.title == "from A")
        #expect(later.events.contains { if case .conflictResolved(let conflict, .serverValueKept) = $0 { conflict.attribute == "title" } else { false } })

        let earlier = try await editSameAttribute(policy: .lastWriterWins, bFirst: false)
        #expect(earlier.b?.title == "from B" && earlier.server == .text("from B") && earlier.a?.title == "from B")
        #expect(earlier.events.contains { if case .conflictResolved(_, .localValueKept) = $0 { true } else { false } })
    }

    @Test func serverWinsDropsTheLocalEdit() async throws {
        // B edited last, but the server's value is kept and B's edit is never pushed.
        let result = try await editSameAttribute(policy: .serverWins, bFirst: false)
        #expect(result.b?.title == "from A" && result.server == .text("from A") && result.a?.title == "from A")
    }

    @Test func deviceWinsPushesTheLocalValueAfterTheServers() async throws {
        // B edited first, so B would lose by time; the policy keeps B's value everywhere.
        let result = try await editSameAttribute(policy: .deviceWins, bFirst: true)
        #expect(result.b?.title == "from B" && result.server == .text("from B") && result.a?.title == "from B")
    }

    @Test func aCustomResolverDecides() async throws {
        let result = try await editSameAttribute(policy: .custom { conflict in
            guard case .text(let local) = conflict.localValue, case .text(let server) = conflict.serverValue else {
                return conflict.serverValue
            }
            return .text(local + " & " + server)
        })
        #expect(result.b?.title == "from B & from A" && result.server == .text("from B & from A")
                && result.a?.title == "from B & from A")
        #expect(result.events.contains { if case .conflictResolved(_, .resolvedValueKept) = $0 { true } else { false } })
    }

    @Test func differentAttributesBothSurvive() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let a = try await TestDevice.open(directory, "a", server: server)
        let b = try await TestDevice.open(directory, "b", server: server)
        try await a.save { $0.insert(Article.make(1)) }
        try await a.engine.sync()
        try await b.engine.sync()
        try await a.save { $0.updateAll(Article.self, ids: [1], set: ["isRead": true]) }
        try await b.save { $0.updateAll(Article.self, ids: [1], set: ["title": "Renamed"]) }
        try await a.engine.sync()
        try await b.engine.sync()
        try await a.engine.sync()
        let expected = Article(id: 1, title: "Renamed", isRead: true, isStarred: false, summary: nil)
        #expect(try await a.store.fetch(Article.self, id: 1) == expected)
        #expect(try await b.store.fetch(Article.self, id: 1) == expected)
        try await a.close()
        try await b.close()
    }

    @Test func aDeletionWinsOverAnUpdateEitherWay() async throws {
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        let a = try await TestDevice.open(directory, "a", server: server)
        let b = try await TestDevice.open(directory, "b", server: server)
        try await a.save { changes in changes.insert(Article.make(1)); changes.insert(Article.make(2)) }
        try await a.engine.sync()
        try await b.engine.sync()
        // 1: A deletes, B updates later. 2: B deletes, A updates later.
        try await a.save { $0.delete(Article.self, id: 1) }
        try await b.save { $0.delete(Article.self, id: 2) }
        nextMillisecond()
        try await b.save { $0.updateAll(Article.self, ids: [1], set: ["isRead": true]) }
        try await a.save { $0.updateAll(Article.self, ids: [2], set: ["isRead": true]) }
        try await a.engine.sync()
        try await b.engine.sync()
        try await a.engine.sync()
        #expect(try await a.articles().isEmpty)
        #expect(try await b.articles().isEmpty)
        #expect(await server.liveValues()["Article"]?.isEmpty == true)
        try await a.close()
        try await b.close()
    }
}
