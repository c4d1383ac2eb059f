import Foundation
import Strata
import StrataServer
import StrataSync
import StrataSyncWire
import Testing

extension ServerTests.EndToEndTests {
    /// The service stopped: `sync()` throws a transient network error and the local edits stay;
    /// started again on the same port, the same engine's next sync sends them and devices converge.
    @Test func serviceDownThenBack() async throws {
        try await Fixture.with { fixture in
            try await fixture.withDevices(["a", "b"]) { _, devices in
                let (a, b) = (devices[0], devices[1])
                try await a.save { $0.insert(Note(id: 1, title: "one", isRead: false, score: 1)) }
                try await a.engine.sync()
                await fixture.servers[0].stop()

                try await a.save {
                    $0.insert(Note(id: 2, title: "two", isRead: false, score: 2))
                    $0.updateAll(Note.self, ids: [1], set: ["title": "offline"])
                }
                do {
                    try await a.engine.sync()
                    Issue.record("sync succeeded with the service stopped")
                } catch let error as SyncError {
                    #expect(error.code == .network, "\(error)")
                    #expect(error.isTransient)
                }
                let kept = try await a.notes()
                #expect(kept.keys.sorted() == [1, 2] && kept[1]?.title == "offline", "local edits kept: \(kept)")

                let restarted = try await RunningServer.start(fixture.database, port: fixture.servers[0].port)
                do {
                    try await a.engine.sync()
                    try await b.engine.sync()
                } catch {
                    await restarted.stop()
                    throw error
                }
                let server = try await Self.serverNotes(fixture)
                await restarted.stop()
                #expect(server.keys.sorted() == [1, 2])
                #expect(server[1]?["title"] == .text("offline"))
                #expect(try await a.notes().mapValues(\.syncValues) == server)
                #expect(try await b.notes().mapValues(\.syncValues) == server)
            }
        }
    }

    /// A wrong token: `sync()` throws a `.rejected` error with status 401, and automatic mode
    /// reports the refusal without scheduling a retry.
    @Test func wrongTokenIsRefused() async throws {
        try await Fixture.with { fixture in
            try await fixture.withDevices(["a"], token: "not-a-token") { _, devices in
                let device = devices[0]
                try await device.save { $0.insert(Note(id: 1, title: "one", isRead: false, score: 1)) }
                do {
                    try await device.engine.sync()
                    Issue.record("sync succeeded with a wrong token")
                } catch let error as SyncError {
                    #expect(error.code == .rejected, "\(error)")
                    #expect(error.status == 401)
                    #expect(!error.isTransient)
                }
                let events = await device.engine.events()
                await device.engine.start()
                // The first push and the long poll each fail once, and neither is retried.
                let failures = try await firstEvents(of: events, count: 2) {
                    if case .failed = $0 { true } else { false }
                }
                for case .failed(let error, let retryIn) in failures {
                    #expect(error.code == .rejected && error.status == 401, "\(error)")
                    #expect(retryIn == nil, "a refusal is not retried")
                }
                #expect(try await device.notes().keys.sorted() == [1])
            }
        }
    }

    /// A device closed after pushing and reopened with a new engine: it keeps its device ID,
    /// pulls what others did meanwhile, and pushes nothing twice.
    @Test func reopenedDeviceResumes() async throws {
        try await Fixture.with { fixture in
            try await fixture.withDevices(["b"]) { directory, devices in
                let b = devices[0]
                var device = ""
                try await fixture.withDevices(["a"], in: directory) { _, devices in
                    let a = devices[0]
                    try await a.save { for id in Int64(1)...3 { $0.insert(Note(id: id, title: "a\(id)", isRead: false, score: id)) } }
                    try await a.engine.sync()
                    device = try await a.engine.deviceID()
                }

                try await b.engine.sync()
                try await b.save {
                    $0.insert(Note(id: 10, title: "b10", isRead: true, score: 10))
                    $0.updateAll(Note.self, ids: [1], set: ["title": "from b"])
                }
                try await b.engine.sync()

                try await fixture.withDevices(["a"], in: directory) { _, devices in
                    let a = devices[0]
                    #expect(try await a.engine.deviceID() == device)
                    try await a.engine.sync()
                    try await b.engine.sync()

                    let server = try await Self.serverNotes(fixture)
                    #expect(server.keys.sorted() == [1, 2, 3, 10])
                    #expect(server[1]?["title"] == .text("from b"))
                    #expect(try await a.notes().mapValues(\.syncValues) == server)
                    #expect(try await b.notes().mapValues(\.syncValues) == server)
                }
                // Each of a's inserts is in the server's log once.
                let log = try await fixture.client().pullAll().entries
                for id in Int64(1)...3 {
                    let pushed = log.filter { $0.device == device && $0.ids.keys.contains(.integer(id)) }
                    #expect(pushed.count == 1, "note \(id) pushed \(pushed.count) times")
                }
            }
        }
    }

    /// Two users' devices share nothing: each syncs only its own space, even for the same keys.
    @Test func usersSpacesStayApart() async throws {
        try await Fixture.with(users: ["alice", "bob"]) { fixture in
            try await fixture.withDevices(["alice"]) { directory, devices in
                let alice = devices[0]
                try await fixture.withDevices(["bob"], in: directory, token: fixture.tokens[1]) { _, devices in
                    let bob = devices[0]
                    try await alice.save { $0.insert(Note(id: 1, title: "alice's", isRead: false, score: 1)) }
                    try await alice.engine.sync()
                    try await bob.engine.sync()
                    #expect(try await bob.notes().isEmpty, "bob sees none of alice's notes")

                    try await bob.save { $0.insert(Note(id: 1, title: "bob's", isRead: true, score: 2)) }
                    try await bob.engine.sync()
                    try await alice.engine.sync()
                    #expect(try await alice.notes()[1]?.title == "alice's")
                    #expect(try await bob.notes()[1]?.title == "bob's")
                }
            }
        }
    }
}
