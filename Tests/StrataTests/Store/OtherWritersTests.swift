import Foundation
@testable import Strata
import StrataTestSupport
import Testing

private struct Memo: Entity, Equatable {
    var id: String
    var text: String
}

/// What other writers do to the file while a store has it open, beyond plain commits
/// (`OutsideWriteTests`): checkpoints, `VACUUM`, rolled-back transactions, a burst of commits, and
/// the file replaced or removed underneath the store.
@MainActor
@Suite struct OtherWritersTests {
    private func seeded(_ path: String, count: Int = 3) async throws -> (Store, MainContext) {
        let store = try await Store.open(at: path, entities: [Memo.self])
        let main = store.mainContext
        for index in 1...count { try main.insert(Memo(id: "m\(index)", text: "first")) }
        try await main.save()?.committed()
        return (store, main)
    }

    /// The next change the main context publishes as `.remote`, skipping none other (there is
    /// no other writer here): nil when none comes within the bound.
    private func nextRemote(_ changes: AsyncStream<ContextChange>) async -> ContextChange? {
        guard let change = await next(changes, within: 10) else { return nil }
        #expect(change.origin == .remote)
        return change
    }

    /// A store of three memos whose main context sees each script the shell runs: `body` gets
    /// the context and a way to run a script and wait for the remote change it makes.
    private func withShell(
        _ body: @MainActor (MainContext, @MainActor (String) async throws -> ContextChange) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("memos.sqlite")
        let (store, main) = try await seeded(path)
        let changes = main.changes()
        try await body(main) { script in
            _ = try await ExternalTools.sqlite3(path, script)
            return try #require(await nextRemote(changes), "the shell's commit never arrived: \(script)")
        }
        try await store.close()
    }

    private func texts(_ main: MainContext) -> [String] {
        main.objects(Memo.self).sorted { $0.id < $1.id }.map(\.text)
    }

    @Test func aCheckpointByTheShellAndCommitsAroundItReachTheMainContext() async throws {
        try await withShell { main, shell in
            let first = try await shell("UPDATE Memo SET text = 'before' WHERE id = 'm1'; PRAGMA wal_checkpoint(TRUNCATE);")
            #expect(first.updated(Memo.self).keys.sorted() == ["m1"])
            let second = try await shell("UPDATE Memo SET text = 'after' WHERE id = 'm2'")
            #expect(second.updated(Memo.self).keys.sorted() == ["m2"])
            #expect(texts(main) == ["before", "after", "first"])
        }
    }

    /// `VACUUM` rewrites every page and changes no row: the commit after it is told alone.
    @Test func vacuumByTheShellChangesNothingTheContextsSee() async throws {
        try await withShell { main, shell in
            let change = try await shell("VACUUM; UPDATE Memo SET text = 'after vacuum' WHERE id = 'm3';")
            #expect(change.updated(Memo.self).keys.sorted() == ["m3"])
            #expect(change.inserted(Memo.self).isEmpty && change.deleted(Memo.self).isEmpty)
            #expect(texts(main) == ["first", "first", "after vacuum"])
        }
    }

    /// A rolled-back transaction leaves no trace: only the commit after it is told.
    @Test func aRolledBackTransactionIsNeverShown() async throws {
        try await withShell { main, shell in
            let change = try await shell("""
                BEGIN; UPDATE Memo SET text = 'rolled back' WHERE id = 'm1'; DELETE FROM Memo WHERE id = 'm2'; ROLLBACK;
                UPDATE Memo SET text = 'committed' WHERE id = 'm3';
                """)
            #expect(change.updated(Memo.self).keys.sorted() == ["m3"])
            #expect(change.deleted(Memo.self).isEmpty)
            #expect(texts(main) == ["first", "first", "committed"])
        }
    }

    /// A thousand commits, one by one: the contexts end at the last one, told in far fewer
    /// change sets than commits (looks at the log are at least `outsideLookInterval` apart).
    @Test func aBurstOfCommitsIsCoalesced() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("memos.sqlite")
        let (store, main) = try await seeded(path, count: 1)
        var remote = 0
        let observation = main.onChange { change in if change.origin == .remote { remote += 1 } }
        defer { observation.cancel() }
        let changes = main.changes()
        let commits = 1_000
        // The store takes the write lock to read the log while the shell commits: the shell waits for it.
        let script = "PRAGMA busy_timeout = 10000;\n"
            + (1...commits).map { "UPDATE Memo SET text = 'v\($0)' WHERE id = 'm1';" }.joined(separator: "\n")
        _ = try await ExternalTools.sqlite3(path, script)
        while main.object(Memo.self, id: "m1")?.text != "v\(commits)" {
            guard await next(changes, within: 10) != nil else { break }
        }
        #expect(main.object(Memo.self, id: "m1")?.text == "v\(commits)", "the last commit never arrived")
        print("\(commits) outside commits reached the main context in \(remote) change sets")
        #expect(remote >= 1 && remote <= commits / 4, "\(remote) change sets for \(commits) commits")
        try await store.close()
    }

    /// A file renamed over the store's path while it is open: nothing is read from or committed
    /// to the file it opened — fetches and saves fail with `.fileReplaced`, the pending change
    /// set stays pending (reported, not lost), and the new file is left as it was.
    @Test func aFileReplacedUnderneathFailsReadsAndWritesClearly() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("memos.sqlite"), other = directory.path("other.sqlite")
        let (store, main) = try await seeded(path)
        let failures = store.failures()
        do {
            let replacement = try await Store.open(at: other, entities: [Memo.self])
            try replacement.mainContext.insert(Memo(id: "r1", text: "replacement"))
            try await replacement.mainContext.save()?.committed()
            try await replacement.close()
        }
        try FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        #expect(rename(other, path) == 0)

        let failure = try #require(await next(failures, within: 10), "the replacement was never reported")
        #expect(failure.code == .fileReplaced)
        await #expect { try await store.ids(Query<Memo>()) } throws: { ($0 as? StrataError)?.code == .fileReplaced }
        try main.insert(Memo(id: "m9", text: "made after the replacement"))
        let submission = try #require(try main.save())
        await #expect { try await submission.committed() } throws: { ($0 as? StrataError)?.code == .fileReplaced }
        #expect(store.pendingCount == 1, "the change set stays pending: reported, not dropped")
        await #expect { try await store.close() } throws: { ($0 as? StrataError)?.code == .fileReplaced }

        let lines = try await ExternalTools.sqlite3(path, "SELECT id FROM Memo ORDER BY id")
        #expect(lines == ["r1"], "the new file holds what its writer committed, nothing of the old store")
    }

    @Test func aFileRemovedUnderneathFailsReadsClearly() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("memos.sqlite")
        let (store, _) = try await seeded(path)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        await #expect { try await store.ids(Query<Memo>()) } throws: { ($0 as? StrataError)?.code == .fileReplaced }
        try? await store.close()
    }
}
