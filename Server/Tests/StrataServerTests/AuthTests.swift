import Foundation
import Logging
import StrataServer
import StrataSyncWire
import Testing

extension ServerTests {
    @Suite struct Auth {
        @Test func aMissingOrUnknownTokenIsUnauthorized() async throws {
            try await Fixture.with { fixture in
                let port = fixture.servers[0].port
                for client in [SyncClient(port: port, token: nil), SyncClient(port: port, token: "not-a-token"),
                               SyncClient(port: port, token: String(fixture.tokens[0].dropLast()))] {
                    for (method, path) in [("GET", "/v1/pull?after=0"), ("GET", "/v1/schema"), ("GET", "/v1/records")] {
                        let answer = try await client.send(method, path)
                        #expect(answer.status == 401, "\(method) \(path)")
                        #expect(answer.error?.error == .unauthorized)
                    }
                    let push = try await client.send("POST", "/v1/push",
                        json: PushRequest(device: "d", batch: 1, changes: []))
                    #expect(push.status == 401)
                }
            }
        }

        @Test func aDeviceOfAnotherUserIsForbidden() async throws {
            try await Fixture.with(users: ["alice", "bob"]) { fixture in
                let alice = fixture.client(user: 0), bob = fixture.client(user: 1)
                try await alice.putSchema(Fixture.schema)
                try await bob.putSchema(Fixture.schema)
                _ = try await alice.push(device: "phone", batch: 1, [.upsert(1, ["title": .text("a"), "isRead": .integer(0)], time: 1)])
                let answer = try await bob.send("POST", "/v1/push", json: PushRequest(
                    device: "phone", batch: 2, changes: [.upsert(2, ["title": .text("b"), "isRead": .integer(0)], time: 2)]))
                #expect(answer.status == 403)
                #expect(answer.error?.error == .forbidden)
                #expect(answer.error?.message.contains("phone") == true)
                #expect(try await bob.pullAll().entries.isEmpty)
            }
        }

        @Test func aDisabledUserIsForbidden() async throws {
            try await Fixture.with { fixture in
                try await withClient(fixture.database) { client in
                    try await UserDirectory(client: client, logger: Logger(label: "test")).setDisabled(true, user: "alice")
                }
                let answer = try await fixture.client().send("GET", "/v1/pull?after=0")
                #expect(answer.status == 403)
                #expect(answer.error?.error == .forbidden)
            }
        }

        @Test func anotherUsersSpaceIsInvisible() async throws {
            try await Fixture.with(users: ["alice", "bob"]) { fixture in
                let alice = fixture.client(user: 0), bob = fixture.client(user: 1)
                try await alice.putSchema(Fixture.schema)
                _ = try await alice.push(device: "a1", batch: 1, [.upsert(7, ["title": .text("secret"), "isRead": .integer(0)], time: 1)])
                // Bob's space has no schema, no log, no records of Alice's.
                #expect(try await bob.send("GET", "/v1/schema").decode(SyncSchema.self).entities.isEmpty)
                #expect(try await bob.pullAll().entries.isEmpty)
                #expect(try await bob.records().records.isEmpty)
                // Bob pushing to the same entity and ID does not touch Alice's record.
                try await bob.putSchema(Fixture.schema)
                _ = try await bob.push(device: "b1", batch: 1, [.upsert(7, ["title": .text("bob's"), "isRead": .integer(1)], time: 99)])
                #expect(try await alice.records().records["Article/7"]?.values["title"] == .text("secret"))
                #expect(try await alice.pullAll().entries.count == 1)
                // A token is stored only as its hash.
                let (plain, hashed) = try await withClient(fixture.database) { client in
                    let token = fixture.tokens[0]
                    let plain = try await client.query(
                        "SELECT count(*) FROM tokens WHERE hash = convert_to(\(token), 'UTF8')").decode(Int64.self)
                        .first(where: { _ in true })
                    let hashed = try await client.query(
                        "SELECT count(*) FROM tokens WHERE hash = sha256(convert_to(\(token), 'UTF8'))").decode(Int64.self)
                        .first(where: { _ in true })
                    return (plain, hashed)
                }
                #expect(plain == 0)
                #expect(hashed == 1)
            }
        }
    }

    @Suite struct Schema {
        @Test func schemasMergeAndAMismatchIsRefusedWhole() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                let first = SyncSchema(entities: ["Article": Fixture.schema.entities["Article"]!])
                #expect(try await client.putSchema(first) == first)
                #expect(try await client.putSchema(Fixture.schema) == Fixture.schema)
                var changed = Fixture.schema
                changed.entities["Tag"]?.attributes["colour"] = .init(type: .text, optional: true)
                changed.entities["Article"]?.attributes["isRead"] = .init(type: .text, optional: false)
                let answer = try await client.send("PUT", "/v1/schema", json: changed)
                #expect(answer.status == 409)
                #expect(answer.error?.error == .schemaMismatch)
                #expect(answer.error?.message.contains("Article.isRead") == true)
                // Nothing of the refused schema was stored, not even its new attribute.
                #expect(try await client.send("GET", "/v1/schema").decode(SyncSchema.self) == Fixture.schema)
            }
        }
    }
}
