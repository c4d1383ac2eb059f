import Foundation
import Strata
@testable import StrataCLICore
import StrataTestSupport
import Testing

/// The read-only commands on a store in a directory the user cannot write, where SQLite cannot
/// create a WAL-mode file's `-wal` and `-shm` companions.
///
/// The directory really is read-only to the command: mode 0555, and the command runs as a user
/// the mode applies to. The tests usually run as root, who bypasses permission checks, so then
/// the built `strata` runs as `nobody` through `setpriv` (see ``Unprivileged``); as any other user
/// it runs directly. The files in the directory are world-readable (0644), as a store copied
/// there would be.
@MainActor
@Suite struct ReadOnlyDirectoryTests {
    /// A fixture store copied into `readonly/` with `files` (companions named by suffix), then the
    /// directory made read-only. `restore` makes it writable again so the scratch can be removed.
    private func readOnlyCopy(of fixture: ReaderFixture, from source: String, _ suffixes: [String] = []) throws -> String {
        let directory = fixture.path("readonly")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let store = directory + "/reader.sqlite"
        for suffix in [""] + suffixes {
            try FileManager.default.copyItem(atPath: source + suffix, toPath: store + suffix)
        }
        try FileManager.default.copyItem(atPath: fixture.snapshot, toPath: directory + "/reader.snapshot")
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory)
        return store
    }

    private func restore(_ store: String) throws {
        let directory = URL(fileURLWithPath: store).deletingLastPathComponent().path
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory)
    }

    private func strata(_ arguments: [String]) async throws -> StrataProcess.Result {
        // Never skipped: without a way to drop root's bypass the test would prove nothing, so it fails.
        guard let launcher = Unprivileged.launcher else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey:
                "running as root without /usr/bin/setpriv (util-linux): cannot make a directory read-only to the command"])
        }
        return try await StrataProcess.run(arguments, launcher: launcher)
    }

    /// A store closed cleanly (no `-wal`, no `-shm`): every read-only command works and shows
    /// exactly what it shows in a writable directory, and nothing is created beside the store.
    @Test func cleanStoreReadsCompletely() async throws {
        let fixture = try await ReaderFixture()
        let store = try readOnlyCopy(of: fixture, from: fixture.store)
        defer { try? restore(store) }
        let directory = URL(fileURLWithPath: store).deletingLastPathComponent().path
        let snapshot = directory + "/reader.snapshot"

        let query = ["Article", "--where", "isStarred OR feedID = 2", "--sort", "published:desc", "--json"]
        let readOnly = try await strata(["query", store] + query)
        #expect(readOnly.status == 0, "\(readOnly.error)")
        #expect(readOnly.error.isEmpty)
        #expect(readOnly.output == (await runCLI(["query", fixture.store] + query)).output)

        let inspect = try await strata(["inspect", store])
        #expect(inspect.status == 0, "\(inspect.error)")
        let generation = try StoreInspector(path: fixture.store).changeLog().generation
        #expect(inspect.output.contains("\ngeneration  \(Format.count(generation))\n"))
        let check = try await strata(["check", store, "--snapshot", snapshot])
        #expect(check.status == 0, "\(check.error)")
        #expect(check.output.hasSuffix("all 7 checks passed\n"))
        let info = try await strata(["snapshot", "info", snapshot, "--store", store])
        #expect(info.status == 0, "\(info.error)")
        #expect(info.output.hasSuffix("valid       yes — valid: it would be used as is\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["reader.snapshot", "reader.sqlite"])
    }

    /// An app has the store open with changes in its WAL: the existing `-shm` is read (read-only)
    /// and the WAL's changes are shown.
    @Test func storeInUseShowsTheChangesInItsWAL() async throws {
        let fixture = try await ReaderFixture()
        let directory = fixture.path("readonly")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let store = directory + "/reader.sqlite"
        try FileManager.default.copyItem(atPath: fixture.store, toPath: store)
        let app = try await fixture.openWithChangesInWAL(at: store)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory)
        defer { try? restore(store) }

        let starred = try await strata(["query", store, "Article", "--where", "isStarred", "--json"])
        #expect(starred.status == 0, "\(starred.error)")
        #expect(starred.error.isEmpty)
        #expect(starred.output.contains("\"matching\": 4"), "2 starred in the file, 2 more in the WAL")
        try restore(store)
        try await app.close()
    }

    /// A `-wal` without its `-shm` (copied alone, or an app's `-shm` deleted): only the database
    /// file can be read. The command says so on standard error, naming the WAL and its size, and
    /// shows the database file as last checkpointed — not the WAL's changes.
    @Test func walWithoutShmIsReportedAsNotShown() async throws {
        let fixture = try await ReaderFixture()
        let app = try await fixture.openWithChangesInWAL()
        let store = try readOnlyCopy(of: fixture, from: fixture.store, ["-wal"])
        defer { try? restore(store) }
        try await app.close()
        let walBytes = try #require(FileManager.default.attributesOfItem(atPath: store + "-wal")[.size] as? Int)
        #expect(walBytes > 32, "the WAL holds frames")

        let starred = try await strata(["query", store, "Article", "--where", "isStarred", "--json"])
        #expect(starred.status == 0, "\(starred.error)")
        #expect(starred.output.contains("\"matching\": 2"), "the database file's 2 starred articles only")
        #expect(starred.error == "strata: warning: \(store): the directory is not writable and the store has no -shm "
                + "file, so its -wal (\(Format.bytes(walBytes))) cannot be read: changes not yet checkpointed into the database file "
                + "are not shown\n")
    }
}
