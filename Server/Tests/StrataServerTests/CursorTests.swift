import Foundation
@testable import StrataServer
import StrataSyncWire
import Testing

extension ServerTests {
    @Suite struct Cursor {
        /// Many devices push into one space at once, through two instances, while a puller follows
        /// the log: it sees every entry exactly once, in sequence order, with no gap.
        @Test func aConcurrentPullerNeverMissesAnEntry() async throws {
            var random = SeededGenerator(test: "aConcurrentPullerNeverMissesAnEntry")
            let devices = 8, batches = 12
            let sizes = (0..<devices).map { _ in (0..<batches).map { _ in Int.random(in: 1...4, using: &random) } }
            try await Fixture.with(instances: 2) { fixture in
                try await fixture.client().putSchema(Fixture.schema)
                let total = sizes.joined().reduce(0, +)
                let puller = Task {
                    var seen: [SyncEntry] = []
                    var cursor = "0"
                    let deadline = ContinuousClock.now + .seconds(120 * waitScale)
                    while seen.count < total, ContinuousClock.now < deadline {
                        let page = try await fixture.client(instance: seen.count % 2).pull(after: cursor, limit: 7, wait: 5)
                        seen += page.changes
                        cursor = page.cursor
                    }
                    return seen
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for device in 0..<devices {
                        group.addTask {
                            let client = fixture.client(instance: device % 2)
                            for batch in 0..<batches {
                                let changes = (0..<sizes[device][batch]).map { index in
                                    SyncEntry.upsert(Int64(device * 10_000 + batch * 10 + index),
                                                     ["title": .text("d\(device)"), "isRead": .integer(0)], time: 1)
                                }
                                _ = try await client.push(device: "device-\(device)", batch: Int64(batch + 1), changes)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let seen = try await puller.value
                #expect(seen.map(\.seq) == (1...Int64(total)).map { $0 })
                let pushed = Set(sizes.enumerated().flatMap { device, batches in
                    batches.enumerated().flatMap { batch, size in (0..<size).map { device * 10_000 + batch * 10 + $0 } }
                })
                let pulled = seen.flatMap(\.ids.keys).map { key -> Int in
                    if case .integer(let id) = key { return Int(id) }
                    return -1
                }
                #expect(pulled.count == pushed.count)
                #expect(Set(pulled) == pushed)
                // Each device's entries arrive in the order it pushed them.
                for device in 0..<devices {
                    let mine = pulled.filter { $0 / 10_000 == device }
                    #expect(mine == mine.sorted())
                }
            }
        }

        @Test func aPullIsPagedByLimit() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                _ = try await client.push(device: "d", batch: 1, (1...5).map { .upsert($0, ["title": .text("t"), "isRead": .integer(0)], time: 1) })
                let first = try await client.pull(after: "0", limit: 2)
                #expect(first.changes.map(\.seq) == [1, 2])
                #expect(first.more)
                #expect(first.cursor == "2")
                let last = try await client.pull(after: "4", limit: 2)
                #expect(last.changes.map(\.seq) == [5])
                #expect(!last.more)
                let empty = try await client.pull(after: "5", limit: 2)
                #expect(empty.changes.isEmpty && empty.cursor == "5" && !empty.more)
                for bad in ["after=x", "after=-1", "after=0&limit=0", "after=0&wait=-2"] {
                    let answer = try await client.send("GET", "/v1/pull?\(bad)")
                    #expect(answer.status == 400, "\(bad)")
                    #expect(answer.error?.error == .malformed)
                }
            }
        }

        /// After the log is pruned, an old cursor is refused with the floor, and the full state
        /// plus its cursor bring a device to the same place as the log did.
        @Test func anExpiredCursorFallsBackToTheFullState() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                _ = try await client.push(device: "d", batch: 1, (1...5).map { .upsert($0, ["title": .text("t\($0)"), "isRead": .integer(0)], time: 1) })
                _ = try await client.push(device: "d", batch: 2, [.delete([2], time: 2)])
                try await withClient(fixture.database) { postgres in
                    try await LogPruner(client: postgres, retention: .zero, interval: .seconds(1), logger: .init(label: "test")).prune()
                }
                _ = try await client.push(device: "d", batch: 3, [.update([1], ["isRead": .integer(1)], time: 3)])
                let expired = try await client.send("GET", "/v1/pull?after=0")
                #expect(expired.status == 410)
                #expect(expired.error?.error == .cursorExpired)
                #expect(expired.error?.floor == "6")
                #expect(try await client.pull(after: "6").changes.map(\.seq) == [7])
                let (records, cursor) = try await client.records()
                #expect(cursor == "7")
                #expect(records.count == 5)
                #expect(records["Article/2"]?.deleted == true)
                #expect(records["Article/1"]?.values == ["title": .text("t1"), "isRead": .integer(1)])
                #expect(try await client.pull(after: cursor).changes.isEmpty)
                // A cursor past the space's end (a replaced database) is expired too.
                #expect(try await client.send("GET", "/v1/pull?after=99").error?.error == .cursorExpired)
            }
        }
    }
}
