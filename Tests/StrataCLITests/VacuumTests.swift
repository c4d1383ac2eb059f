import Foundation
import Strata
import StrataCLICore
import StrataTestSupport
import Testing

/// `strata vacuum`: refuses while another connection has the store open, and reports the WAL
/// frames it really copied.
@MainActor
@Suite struct VacuumTests {
    /// An app (a `Store` opened by this test) has the store open: vacuum refuses with one line
    /// and exit code 1, and leaves the file alone; once the app closes, it runs.
    @Test func refusesWhileAnAppHasTheStoreOpen() async throws {
        let fixture = try await ReaderFixture()
        do {
            let app = try await Store.open(at: fixture.store, entities: [Feed.self, Article.self])
            let before = FileState(fixture.store)
            let refused = await runCLI(["vacuum", fixture.store])
            #expect(refused.code == ExitStatus.failure)
            #expect(refused.output.isEmpty)
            #expect(refused.errorLines.map { Golden.normalize($0, directory: fixture.directory) }
                    == ["strata: error: <DIR>/reader.sqlite: another connection has the store open (an app, or another "
                        + "strata command); close it and run vacuum again"])
            #expect(FileState(fixture.store) == before)
            #expect(try await app.fetch(Article.self, id: "a-000001") != nil, "the app's connection still works")
            try await app.close()
        }

        let vacuumed = await runCLI(["vacuum", fixture.store])
        #expect(vacuumed.code == ExitStatus.ok, "\(vacuumed.error)")
        #expect(vacuumed.output.hasPrefix("vacuum \(fixture.store)\n  checkpoint  0 WAL frames copied"),
                "a clean close leaves nothing in the WAL")
    }

    /// A store left with changes in its WAL (copied while the app had it open, as a crash leaves
    /// it): vacuum copies every frame of that WAL — it holds one transaction, so its size says how
    /// many — and the changes are in the database file afterwards.
    @Test func reportsTheFramesItCopied() async throws {
        let fixture = try await ReaderFixture()
        let app = try await fixture.openWithChangesInWAL()
        let crashed = fixture.path("crashed.sqlite")
        try FileManager.default.copyItem(atPath: fixture.store, toPath: crashed)
        try FileManager.default.copyItem(atPath: fixture.store + "-wal", toPath: crashed + "-wal")
        try await app.close()
        let pageSize = try StoreInspector(path: fixture.store).fileSizes().pageSize
        let walBytes = try #require(FileManager.default.attributesOfItem(atPath: crashed + "-wal")[.size] as? Int)
        let frames = (walBytes - 32) / (24 + pageSize)
        #expect(frames > 0 && walBytes == 32 + frames * (24 + pageSize), "a WAL header and whole frames")

        let result = await runCLI(["vacuum", crashed, "--json"])
        #expect(result.code == ExitStatus.ok, "\(result.error)")
        let report = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        #expect(report?["checkpointedFrames"] as? Int == frames)
        #expect(!FileManager.default.fileExists(atPath: crashed + "-wal"))
        let starred = await runCLI(["query", crashed, "Article", "--where", "isStarred", "--json"])
        #expect(starred.output.contains("\"matching\": 4"))
    }
}
