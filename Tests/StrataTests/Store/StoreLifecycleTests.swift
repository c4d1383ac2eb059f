import CSQLite
import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// What `Store.open` accepts and refuses, and what `close()` releases.
@MainActor
@Suite struct StoreLifecycleTests {
    /// Runs SQL on a plain SQLite connection of the test's own (as another app would).
    private func foreign(_ path: String, _ sql: String) throws -> [String] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db else {
            throw StrataError(.cannotOpen, "test connection", path: path)
        }
        defer { sqlite3_close_v2(db) }
        var rows: [String] = []
        var statement: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        var remaining = sql
        while !remaining.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            let consumed: Int = try remaining.withCString { start in
                guard sqlite3_prepare_v2(db, start, -1, &statement, &tail) == SQLITE_OK else {
                    throw StrataError(.sqlite, String(cString: sqlite3_errmsg(db)), path: path)
                }
                defer { sqlite3_finalize(statement) }
                while true {
                    let code = sqlite3_step(statement)
                    if code == SQLITE_ROW {
                        rows.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "NULL")
                    } else if code == SQLITE_DONE {
                        break
                    } else {
                        throw StrataError(.sqlite, String(cString: sqlite3_errmsg(db)), path: path)
                    }
                }
                return tail.map { $0 - start } ?? strlen(start)
            }
            remaining = String(remaining.utf8.dropFirst(consumed))!
        }
        return rows
    }

    private func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    @Test func anotherApplicationsDatabaseIsRefusedAndLeftUntouched() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("other-app.sqlite")
        _ = try foreign(path, """
            CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);
            CREATE INDEX notes_body ON notes (body);
            INSERT INTO notes (body) VALUES ('keep me');
            """)
        let before = try bytes(path)
        let error = await #expect(throws: StrataError.self) { _ = try await openStore(path) }
        #expect(error?.code == .notADatabase)
        #expect(error?.path == path)
        #expect(error?.message.contains("not a Strata store") == true)
        #expect(error?.message.contains("table notes") == true, "names what it found: \(String(describing: error))")
        #expect(try bytes(path) == before, "not one byte changed")
        #expect(try foreign(path, "PRAGMA journal_mode") == ["delete"], "still in its own journal mode")
        #expect(try foreign(path, "SELECT name FROM sqlite_master WHERE name LIKE 'strata%'").isEmpty)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test func emptyFilesBecomeNewStores() async throws {
        // A zero-length file is an empty database to SQLite: it becomes a store (documented).
        let directory = try TemporaryDirectory()
        let zeroLength = directory.path("zero.sqlite")
        #expect(FileManager.default.createFile(atPath: zeroLength, contents: Data()))
        let store = try await openStore(zeroLength)
        #expect(store.wasCreated)
        try await store.close()
        // An SQLite database with no schema at all (only a header) likewise.
        let headerOnly = directory.path("header-only.sqlite")
        _ = try foreign(headerOnly, "PRAGMA user_version = 0; VACUUM;")
        let second = try await openStore(headerOnly)
        #expect(second.wasCreated)
        // A Strata store reopens as itself.
        try await second.close()
        let again = try await openStore(headerOnly)
        #expect(!again.wasCreated)
        #expect(again.storeID == second.storeID)
    }

    @Test func closeReleasesTheFile() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("s.sqlite")
        let store = try await openStore(path)
        let main = store.mainContext          // the main context keeps the store alive
        var changes = ChangeSet()
        changes.insert(Article.make(1))
        try store.submit(changes)
        _ = try await main.fetch(Query<Article>())
        try await store.close()

        #expect(!Self.openFiles().contains { $0.hasPrefix(path) }, "no descriptor of the database or its WAL stays open")
        // Another connection may switch the journal mode (needs the exclusive lock WAL readers block).
        #expect(try foreign(path, "PRAGMA journal_mode = DELETE") == ["delete"])
        #expect(try foreign(path, "SELECT count(*) FROM articles") == ["1"], "what was accepted was committed")
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))

        // Afterwards: memory still answers; everything that needs SQLite says the store is closed.
        #expect(main.object(Article.self, id: "article-1") != nil)
        await #expect(throws: StrataError.self) { _ = try await store.fetch(Query<Article>()) }
        let fetchError = await #expect(throws: StrataError.self) { _ = try await main.fetch(Query<Article>()) }
        #expect(fetchError?.code == .closed)
        let submitError = #expect(throws: StrataError.self) { try store.submit(changes) }
        #expect(submitError?.code == .closed)
        try await store.close()                // a second close is harmless
        try FileManager.default.removeItem(atPath: path)
    }

    /// The paths this process has open (Linux: the targets of /proc/self/fd).
    private static func openFiles() -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
    }

    @Test func deletionsAreForgottenOnceNoFetchIsInFlight() async throws {
        // Merged deletions are remembered only to stop an older fetch result reviving them.
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("s.sqlite"))
        var seed = ChangeSet()
        for index in 0..<500 { seed.insert(Article.make(index)) }
        try store.submit(seed)
        try await store.persist()
        let worker = store.makeWorkerContext()
        _ = try await worker.fetch(Query<Article>())
        let main = store.mainContext
        _ = try await main.fetch(Query<Article>())

        for round in 0..<5 {
            var deletions = ChangeSet()
            for index in stride(from: round * 100, to: round * 100 + 100, by: 1) { deletions.delete(Article.self, id: "article-\(index)") }
            try store.submit(deletions)
            await main.mergeAccepted()
            #expect(await worker.object(Article.self, id: "article-\(round * 100)") == nil)   // absorbed
            #expect(await worker.rememberedDeletionCount == 0, "round \(round)")
            #expect(main.graph.rememberedDeletionCount == 0, "round \(round)")
        }
        try await store.persist()
        try await store.close()
    }
}
