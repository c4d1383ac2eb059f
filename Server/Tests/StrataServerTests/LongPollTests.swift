import Foundation
import StrataServer
import StrataSyncWire
import Testing

extension ServerTests {
    @Suite struct LongPoll {
        /// A pull waiting on one instance is woken by a push through the other (LISTEN/NOTIFY).
        /// The wait's 60 s is only a hang detector: a wake-up that never came returns an empty page.
        @Test func aWaitingPullWakesOnAPushFromAnotherInstance() async throws {
            try await Fixture.with(instances: 2) { fixture in
                let pusher = fixture.client(instance: 1)
                try await pusher.putSchema(Fixture.schema)
                _ = try await pusher.push(device: "d", batch: 1, [.upsert(1, ["title": .text("t"), "isRead": .integer(0)], time: 1)])
                let waiting = Task { try await fixture.client(instance: 0).pull(after: "1", wait: 60) }
                try await fixture.servers[0].waitForWaiters(1)
                _ = try await pusher.push(device: "d", batch: 2, [.update([1], ["isRead": .integer(1)], time: 2)])
                let page = try await waiting.value
                #expect(page.changes.map(\.seq) == [2])
                #expect(page.cursor == "2")
            }
        }

        @Test func aWaitEndsEmptyWhenNothingComes() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                let start = ContinuousClock.now
                let page = try await client.pull(after: "0", wait: 1)
                #expect(page.changes.isEmpty && page.cursor == "0")
                #expect(ContinuousClock.now - start >= .milliseconds(900))
            }
        }

        @Test func anotherSpacesPushDoesNotAnswerAWait() async throws {
            try await Fixture.with(users: ["alice", "bob"]) { fixture in
                let alice = fixture.client(user: 0), bob = fixture.client(user: 1)
                try await alice.putSchema(Fixture.schema)
                try await bob.putSchema(Fixture.schema)
                let waiting = Task { try await alice.pull(after: "0", wait: 2) }
                try await fixture.servers[0].waitForWaiters(1)
                _ = try await bob.push(device: "b", batch: 1, [.upsert(1, ["title": .text("t"), "isRead": .integer(0)], time: 1)])
                #expect(try await waiting.value.changes.isEmpty)
            }
        }
    }
}
