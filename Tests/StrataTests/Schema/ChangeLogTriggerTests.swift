import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Who logs what: the writer applies its own change sets with triggers off on its connection and
/// logs them itself, once per run; every other writer — another process, `Store.write`, a named
/// migration — is logged row by row by the triggers, which stay on for everything but the
/// writer's change sets. `Feed` has no full-text index (its change sets run with triggers off);
/// `Article` has one (they run with triggers on, see `ChangeLogTests`).
@MainActor
@Suite struct ChangeLogTriggerTests {
    /// The raw log after `token`: generation, entity code, key, op.
    private func entries(_ store: Store, after token: ChangeToken) async throws -> [[DatabaseValue]] {
        try await store.read { db in
            try db.rows("SELECT generation, entity, key, op FROM strata_changes WHERE generation > ? ORDER BY generation",
                        [.integer(token.generation)]).map { $0.values }
        }
    }

    private func code(_ store: Store, _ entity: String) async throws -> Int64 {
        try #require(try await store.read { db in try db.value("SELECT rowid FROM strata_entities WHERE name = ?", [.text(entity)]) }?.integer)
    }

    private func triggersEnabled(_ store: Store) async throws -> Bool {
        try await store.onQueue { writer in try writer.connection.triggersEnabled }
    }

    private func described(_ history: ChangeHistory) -> [String] {
        history.changes.map { "\($0.operation) \($0.entity) \($0.key)" }
    }

    @Test func strataOwnChangeSetsAreLoggedOncePerRunWithTriggersOff() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let feed = try await code(store, "Feed")
        // Feed carries only the log triggers: its change sets run with triggers off. Article's
        // full-text triggers must fire, so its change sets keep them on.
        #expect(try await store.onQueue { writer in try Writer.tablesFiringOtherTriggers(writer.connection) } == ["articles"])
        let token = try await store.currentChangeToken()
        var changes = ChangeSet()
        for id in 1...3 { changes.insert(Feed(id: Int64(id), name: "feed \(id)")) }
        changes.update(Feed(id: 2, name: "renamed"))
        changes.delete(Feed.self, id: 3)
        changes.upsert(Feed(id: 4, name: "new"))
        changes.updateAll(Feed.self, ids: [1, 4], set: ["name": "bulk"])
        changes.deleteAll(Feed.self, where: Attribute("id") == 1)
        try await store.submit(changes).committed()

        let g = token.generation
        #expect(try await entries(store, after: token) == [
            [.integer(g + 1), .integer(feed), .blob(Data("[1,2,3]".utf8)), .integer(1)],
            [.integer(g + 2), .integer(feed), .integer(2), .integer(2)],
            [.integer(g + 3), .integer(feed), .integer(3), .integer(3)],
            [.integer(g + 4), .integer(feed), .integer(4), .integer(1)],
            [.integer(g + 5), .integer(feed), .blob(Data("[1,4]".utf8)), .integer(2)],
            [.integer(g + 6), .integer(feed), .integer(1), .integer(3)],
        ], "one entry per run, none from the triggers")
        #expect(try await triggersEnabled(store), "triggers are back on once the change sets are applied")
    }

    @Test func writersOutsideStrataAreLoggedRowByRow() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await openStore(path)
        let token = try await seed(store, with: [Feed(id: 1, name: "seed")])

        // The sqlite3 shell: another process on its own connection, while the store is open.
        _ = try await ExternalTools.sqlite3(path, """
            INSERT INTO Feed (id, name) VALUES (10, 'shell'), (11, 'shell');
            UPDATE Feed SET name = 'edited' WHERE id IN (1, 10);
            UPDATE Feed SET id = 12 WHERE id = 11;
            DELETE FROM Feed WHERE id = 10;
            """)
        let outside = try await store.changes(since: token)
        #expect(described(outside) == [
            "insert Feed 10", "insert Feed 11", "update Feed 1", "update Feed 10",
            "delete Feed 11", "update Feed 12", "delete Feed 10",
        ])
        #expect(Set(outside.changes.map(\.generation)).count == 7, "one generation per row")

        // The store's own raw SQL runs on the writer's connection, with triggers on.
        let enabledInWrite = try await store.write { db in
            try db.execute("INSERT INTO Feed (id, name) VALUES (20, 'write')")
            try db.execute("UPDATE Feed SET name = 'again' WHERE id = 20")
            try db.execute("DELETE FROM Feed WHERE id = 12")
            return try db.connection.triggersEnabled
        }
        #expect(enabledInWrite)
        let written = try await store.changes(since: outside.token)
        #expect(described(written) == ["insert Feed 20", "update Feed 20", "delete Feed 12"])
        #expect(Set(written.changes.map(\.generation)).count == 3)
    }

    @Test func triggersAreBackOnAfterAFailedChangeSetAndAFailedAttempt() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var seed = ChangeSet()
        seed.insert(Feed(id: 1, name: "seed"))
        try await store.submit(seed).committed()
        var failing = ChangeSet()
        failing.insert(Feed(id: 2, name: "fine"))
        failing.insert(Feed(id: 1, name: "duplicate"))
        await #expect(throws: StrataError.self) { try await store.submit(failing).committed() }
        #expect(try await triggersEnabled(store))

        // A drain whose body throws: the writer refuses to apply outside `applyingOwnChanges`,
        // and `applyingOwnChanges` turns triggers back on when its body throws.
        let outcome = try await store.onQueue { writer -> String in
            do {
                try writer.apply(ChangeSet())
                return "applied"
            } catch let error as StrataError where error.code == .misuse {
                var inside: Bool?
                _ = try? writer.applyingOwnChanges([]) { () throws -> Void in
                    inside = try writer.connection.triggersEnabled
                    throw StrataError(.busy, "injected")
                }
                return "refused; triggers \(inside == false ? "off" : "on") in the body, "
                    + "\(try writer.connection.triggersEnabled ? "on" : "off") after it threw"
            }
        }
        #expect(outcome == "refused; triggers off in the body, on after it threw")

        let token = try await store.currentChangeToken()
        try await store.write { db in try db.execute("UPDATE Feed SET name = 'logged' WHERE id = 1") }
        #expect(described(try await store.changes(since: token)) == ["update Feed 1"])
    }

    @Test func userSQLIsRefusedWhileTriggersAreOff() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let code = try await store.onQueue { writer -> StrataError.Code? in
            try writer.connection.setTriggersEnabled(false)
            defer { try? writer.connection.setTriggersEnabled(true) }
            do {
                try Database.scoped(writer.connection) { db in try db.execute("INSERT INTO Feed (id, name) VALUES (1, 'x')") }
                return nil
            } catch let error as StrataError {
                return error.code
            }
        }
        #expect(code == .misuse)
        #expect(try await store.count(Query<Feed>()) == 0)
    }

    @Test func anAppTriggerOnAnEntityTableStillFiresForStrataSaves() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        let feed = try await code(store, "Feed")
        var first = ChangeSet()
        first.insert(Feed(id: 100, name: "before the trigger"))
        try await store.submit(first).committed()   // the writer looked for other triggers: none on Feed then
        try await store.write { db in
            try db.execute("CREATE TABLE feed_audit (feed INTEGER, what TEXT)")
            try db.execute("CREATE TRIGGER feed_audit_insert AFTER INSERT ON Feed BEGIN "
                           + "INSERT INTO feed_audit VALUES (new.id, 'insert'); END")
        }
        #expect(try await store.onQueue { writer in try Writer.tablesFiringOtherTriggers(writer.connection) } == ["articles", "feed"])
        let token = try await store.currentChangeToken()
        var changes = ChangeSet()
        changes.insert(Feed(id: 1, name: "a"))
        changes.insert(Feed(id: 2, name: "b"))
        try await store.submit(changes).committed()
        var next = ChangeSet()
        next.delete(Feed.self, id: 1)
        try await store.submit(next).committed()

        #expect(try await store.read { db in try db.rows("SELECT feed, what FROM feed_audit ORDER BY feed").map { $0.values } }
                == [[.integer(1), .text("insert")], [.integer(2), .text("insert")]])
        let g = token.generation
        #expect(try await entries(store, after: token) == [
            [.integer(g + 1), .integer(feed), .blob(Data("[1,2]".utf8)), .integer(1)],
            [.integer(g + 2), .integer(feed), .integer(1), .integer(3)],
        ], "the writer's entries alone, at the generations they would have had")
        #expect(try await triggersEnabled(store))
    }

    @Test func triggersAForeignKeyActionReachesStillFire() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        try await store.write { db in
            try db.execute("CREATE TABLE feed_notes (id INTEGER PRIMARY KEY, feed INTEGER REFERENCES Feed(id) ON DELETE CASCADE)")
            try db.execute("CREATE TABLE notes_gone (note INTEGER)")
            try db.execute("CREATE TRIGGER feed_notes_gone AFTER DELETE ON feed_notes BEGIN "
                           + "INSERT INTO notes_gone VALUES (old.id); END")
        }
        #expect(try await store.onQueue { writer in try Writer.tablesFiringOtherTriggers(writer.connection) }
                == ["articles", "feed_notes", "feed"])
        var changes = ChangeSet()
        changes.insert(Feed(id: 1, name: "a"))
        try await store.submit(changes).committed()
        try await store.write { db in try db.execute("INSERT INTO feed_notes (id, feed) VALUES (7, 1)") }
        let token = try await store.currentChangeToken()
        var delete = ChangeSet()
        delete.delete(Feed.self, id: 1)
        try await store.submit(delete).committed()

        #expect(try await store.read { db in try db.value("SELECT count(*) FROM feed_notes") } == .integer(0), "cascaded")
        #expect(try await store.read { db in try db.value("SELECT group_concat(note) FROM notes_gone") } == .text("7"),
                "the cascaded row's trigger fired")
        #expect(described(try await store.changes(since: token)) == ["delete Feed 1"])
    }

    @Test func aNamedMigrationIsLoggedRowByRow() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let token: ChangeToken
        do {
            let store = try await openStore(path)
            var changes = ChangeSet()
            changes.insert(Feed(id: 1, name: "a"))
            changes.insert(Feed(id: 2, name: "b"))
            try await store.submit(changes).committed()
            token = try await store.currentChangeToken()
            try await store.close()
        }
        let shout = Migration("shout") { db in try db.execute("UPDATE Feed SET name = upper(name)") }
        let store = try await openStore(path, migrations: [shout])
        #expect(store.appliedMigrations.contains("shout"))
        let history = try await store.changes(since: token)
        #expect(described(history) == ["update Feed 1", "update Feed 2"])
        #expect(Set(history.changes.map(\.generation)).count == 2)
    }

    @Test func markerTriggersOfThePreviousVersionAreReplacedAtOpen() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let feed: Int64
        do {
            let store = try await openStore(path)
            feed = try await code(store, "Feed")
            try await store.close()
        }
        // The previous version's triggers, as it created them: they stood aside while a
        // `writer_batch` row was in strata_meta.
        let unlessWriter = "WHEN NOT EXISTS (SELECT 1 FROM strata_meta WHERE key = 'writer_batch')"
        _ = try await ExternalTools.sqlite3(path, """
            DROP TRIGGER "strata_log_Feed_insert"; DROP TRIGGER "strata_log_Feed_update"; DROP TRIGGER "strata_log_Feed_delete";
            CREATE TRIGGER "strata_log_Feed_insert" AFTER INSERT ON "Feed" \(unlessWriter) BEGIN
                INSERT INTO strata_changes (entity, key, op) VALUES (\(feed), new."id", 1);
            END;
            CREATE TRIGGER "strata_log_Feed_update" AFTER UPDATE ON "Feed" \(unlessWriter) BEGIN
                INSERT INTO strata_changes (entity, key, op) SELECT \(feed), old."id", 3 WHERE old."id" IS NOT new."id";
                INSERT INTO strata_changes (entity, key, op) VALUES (\(feed), new."id", 2);
            END;
            CREATE TRIGGER "strata_log_Feed_delete" AFTER DELETE ON "Feed" \(unlessWriter) BEGIN
                INSERT INTO strata_changes (entity, key, op) VALUES (\(feed), old."id", 3);
            END;
            """)
        let store = try await openStore(path)
        let expected = ChangeLog.triggers(try store.registry.schema(named: "Feed"), code: feed)
        let stored = try await store.read { db in
            try db.rows("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'Feed' ORDER BY name")
                .map { $0.values.map { String.fromDatabaseValue($0) ?? "" } }
        }
        #expect(stored == expected.sorted { $0.name < $1.name }.map { [$0.name, $0.sql] }, "replaced by today's")
        #expect(!stored.joined().joined().contains("writer_batch"))

        let token = try await store.currentChangeToken()
        var changes = ChangeSet()
        for id in 1...10 { changes.insert(Feed(id: Int64(id), name: "f")) }
        try await store.submit(changes).committed()
        #expect(try await entries(store, after: token).count == 1, "Strata's save: one entry")
        _ = try await ExternalTools.sqlite3(path, "UPDATE Feed SET name = 'shell' WHERE id IN (3, 4);")
        let history = try await store.changes(since: token)
        #expect(described(history).suffix(2) == ["update Feed 3", "update Feed 4"])
        #expect(history.changes.count == 12)
    }
}
