import Foundation
import StrataServer
import StrataSyncWire

/// One test's world: a new database on the suite's cluster, users with tokens, and service
/// instances on it. ``with(users:instances:limits:_:)`` stops the instances however the test ends.
struct Fixture: Sendable {
    let database: PostgresURL
    let tokens: [String]
    let servers: [RunningServer]

    /// A client of instance `instance` with user `user`'s token.
    func client(user: Int = 0, instance: Int = 0) -> SyncClient {
        SyncClient(port: servers[instance].port, token: tokens[user])
    }

    static func with<Result: Sendable>(
        users: [String] = ["alice"], instances: Int = 1, limits: SyncLimits = SyncLimits(),
        _ body: @Sendable (Fixture) async throws -> Result
    ) async throws -> Result {
        let database = try await PostgresScope.makeDatabase()
        let tokens = try await addUsers(users, on: database)
        var servers: [RunningServer] = []
        do {
            for _ in 0..<instances { servers.append(try await RunningServer.start(database, limits: limits)) }
            let result = try await body(Fixture(database: database, tokens: tokens, servers: servers))
            for server in servers { await server.stop() }
            return result
        } catch {
            for server in servers { await server.stop() }
            throw error
        }
    }

    /// The schema the tests push against: articles by integer key, tags by text key.
    static let schema = SyncSchema(entities: [
        "Article": .init(keyType: .integer, attributes: [
            "title": .init(type: .text, optional: false),
            "isRead": .init(type: .integer, optional: false),
            "score": .init(type: .real, optional: true),
            "image": .init(type: .blob, optional: true),
        ]),
        "Tag": .init(keyType: .text, attributes: ["name": .init(type: .text, optional: false)]),
    ])
}

extension SyncEntry {
    static func upsert(_ id: Int64, _ values: [String: SyncValue], time: Int64, entity: String = "Article") -> SyncEntry {
        SyncEntry(entity: entity, op: .upsert, ids: SyncIDSet([.integer(id)]), values: values, time: time)
    }

    static func update(_ ids: [Int64], _ values: [String: SyncValue], time: Int64) -> SyncEntry {
        SyncEntry(entity: "Article", op: .update, ids: SyncIDSet(ids.map(SyncKey.integer)), values: values, time: time)
    }

    static func delete(_ ids: [Int64], time: Int64) -> SyncEntry {
        SyncEntry(entity: "Article", op: .delete, ids: SyncIDSet(ids.map(SyncKey.integer)), time: time)
    }
}

extension SyncClient {
    /// The space's full state, every page, by "Entity/key".
    func records() async throws -> (records: [String: RecordState], cursor: String) {
        var records: [String: RecordState] = [:]
        var position = ""
        var cursor: String?
        while true {
            let page = try await send("GET", "/v1/records?after=\(position)&limit=2").decode(RecordsResponse.self)
            cursor = cursor ?? page.cursor
            for record in page.records { records["\(record.entity)/\(record.id)"] = record }
            guard let next = page.next else { return (records, cursor ?? "0") }
            position = next.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? next
        }
    }
}
