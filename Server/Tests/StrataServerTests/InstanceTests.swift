import Foundation
import StrataServer
import StrataSyncWire
import Testing

extension ServerTests {
    @Suite struct Instances {
        /// A random script of pushes (seeded), run once through one instance and once alternating
        /// between two instances on another database: the logs and states are the same.
        @Test func twoInstancesGiveTheSameResultsAsOne() async throws {
            var random = SeededGenerator(test: "twoInstancesGiveTheSameResultsAsOne")
            let script = Self.randomScript(using: &random)
            let one = try await Fixture.with(instances: 1) { try await Self.run(script, on: $0) }
            let two = try await Fixture.with(instances: 2) { try await Self.run(script, on: $0) }
            #expect(one.log == two.log)
            #expect(one.records == two.records)
            #expect(!one.log.isEmpty)
        }

        /// A service stopped between a push and the next, and a new one started on the same
        /// database: the device's batches, the log and the cursor carry on where they were.
        @Test func aRestartedServiceResumes() async throws {
            let database = try await PostgresScope.makeDatabase()
            let token = try await addUsers(["alice"], on: database)[0]
            let first = try await RunningServer.start(database)
            let before = SyncClient(port: first.port, token: token)
            try await before.putSchema(Fixture.schema)
            _ = try await before.push(device: "d", batch: 1, [.upsert(1, ["title": .text("t"), "isRead": .integer(0)], time: 1)])
            let cursor = try await before.pullAll().cursor
            // The second batch is sent, then the service goes away before the device hears back:
            // the device retries the same batch on the new instance.
            _ = try await before.push(device: "d", batch: 2, [.update([1], ["isRead": .integer(1)], time: 2)])
            await first.stop()
            #expect(await (try? before.send("GET", "/v1/pull?after=0")) == nil)

            let second = try await RunningServer.start(database)
            let after = SyncClient(port: second.port, token: token)
            let retry = try await after.push(device: "d", batch: 2, [.update([1], ["isRead": .integer(1)], time: 2)])
            #expect(retry.duplicate)
            #expect(try await after.push(device: "d", batch: 3, [.update([1], ["title": .text("u")], time: 3)]).cursor == "3")
            #expect(try await after.pull(after: cursor).changes.map(\.seq) == [2, 3])
            #expect(try await after.records().records["Article/1"]?.values == ["title": .text("u"), "isRead": .integer(1)])
            await second.stop()
        }

        typealias Script = [(device: Int, changes: [SyncEntry])]

        static func randomScript(using random: inout SeededGenerator) -> Script {
            (0..<30).map { step in
                let device = Int.random(in: 0..<3, using: &random)
                let changes = (0..<Int.random(in: 1...4, using: &random)).map { index -> SyncEntry in
                    let id = Int64.random(in: 1...8, using: &random)
                    let time = Int64.random(in: 1...100, using: &random)
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0: return .delete([id], time: time)
                    case 1...4: return .upsert(id, ["title": .text("s\(step).\(index)"), "isRead": .integer(0)], time: time)
                    default: return .update([id, id % 8 + 1], ["isRead": .integer(Int64(step))], time: time)
                    }
                }
                return (device, changes)
            }
        }

        static func run(_ script: Script, on fixture: Fixture) async throws -> (log: [SyncEntry], records: [String: RecordState]) {
            try await fixture.client().putSchema(Fixture.schema)
            var batches = [Int64](repeating: 0, count: 3)
            for (step, (device, changes)) in script.enumerated() {
                batches[device] += 1
                let client = fixture.client(instance: step % fixture.servers.count)
                _ = try await client.push(device: "device-\(device)", batch: batches[device], changes)
            }
            let client = fixture.client(instance: fixture.servers.count - 1)
            return (try await client.pullAll().entries, try await client.records().records)
        }
    }
}
