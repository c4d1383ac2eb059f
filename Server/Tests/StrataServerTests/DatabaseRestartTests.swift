import Foundation
import StrataServer
import StrataSyncWire
import Testing

extension ServerTests {
    @Suite struct DatabaseRestart {
        /// PostgreSQL restarted under a running service (a cluster of this test's own, so the
        /// suite's other tests are not disturbed): requests fail while it is down, then the
        /// service recovers by itself — pushes apply, a retried batch is a duplicate, and long
        /// polls are woken again once the listening connection is back.
        @Test func theServiceRecoversFromADatabaseRestart() async throws {
            let cluster = try await PostgresCluster.start()
            do {
                try await Self.run(on: cluster)
            } catch {
                try? cluster.stop()
                throw error
            }
            try cluster.stop()
        }

        static func run(on cluster: PostgresCluster) async throws {
            let database = try PostgresURL(cluster.url(database: "postgres"))
            let token = try await addUsers(["alice"], on: database)[0]
            let server = try await RunningServer.start(database)
            let client = SyncClient(port: server.port, token: token)
            do {
                try await client.putSchema(Fixture.schema)
                _ = try await client.push(device: "d", batch: 1, [.upsert(1, ["title": .text("t"), "isRead": .integer(0)], time: 1)])
                try cluster.restart()
                // The pool's old connections are dead: a request may fail (500) until it has new
                // ones. The device retries batch 2 as it would, until it is answered.
                let batch2 = [SyncEntry.update([1], ["isRead": .integer(1)], time: 2)]
                let deadline = ContinuousClock.now + .seconds(30 * waitScale)
                var answer = try await client.send("POST", "/v1/push", json: PushRequest(device: "d", batch: 2, changes: batch2))
                while answer.status != 200, ContinuousClock.now < deadline {
                    #expect(answer.status == 500)
                    try await Task.sleep(for: .milliseconds(50))
                    answer = try await client.send("POST", "/v1/push", json: PushRequest(device: "d", batch: 2, changes: batch2))
                }
                #expect(try answer.decode(PushResponse.self) == PushResponse(batch: 2, duplicate: false, cursor: "2"))
                #expect(try await client.push(device: "d", batch: 2, batch2).duplicate)
                // The listener reconnects by itself: a waiting pull is woken by a push again.
                let waiting = Task { try await client.pull(after: "2", wait: 60) }
                try await server.waitForWaiters(1)
                _ = try await client.push(device: "d", batch: 3, [.update([1], ["title": .text("u")], time: 3)])
                #expect(try await waiting.value.changes.map(\.seq) == [3])
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }
    }
}
