import Foundation
import Strata
import StrataCLICore
import StrataTestSupport
import Testing

/// Counts of one are printed in the singular.
@MainActor
@Suite struct CountWordingTests {
    /// A store of one entity with one logged change.
    @Test func oneEntityAndOneChange() async throws {
        let scratch = try TemporaryDirectory()
        let path = scratch.path("feeds.sqlite")
        do {
            let store = try await Store.open(at: path, entities: [Feed.self])
            var changes = ChangeSet()
            changes.insert(Feed(id: 1, title: "Only", url: URL(string: "https://only.example")!, category: "Solo"))
            try store.submit(changes)
            try await store.close()
        }
        let check = await runCLI(["check", path])
        #expect(check.code == 0, "\(check.error)")
        #expect(check.output.contains("\n  change log     ok      generations 1…1 continuous (1 entry, floor 0)\n"))
        #expect(check.output.contains("\n  entity tables  ok      1 entity matches its recorded schema\n"))
        let inspect = await runCLI(["inspect", path])
        #expect(inspect.output.contains("\nchange log  generations 1…1 (1 entry), floor 0\n"))
    }

    /// A snapshot one change behind its store.
    @Test func snapshotOneChangeBehind() async throws {
        let fixture = try await ReaderFixture()
        do {
            let store = try await Store.open(at: fixture.store, entities: [Feed.self, Article.self])
            try store.updateAll(Article.self, ids: ["a-000001"], set: ["isRead": true])
            try await store.close()
        }
        let info = await runCLI(["snapshot", "info", fixture.snapshot, "--store", fixture.store])
        #expect(info.code == 0, "\(info.error)")
        #expect(info.output.hasSuffix("valid       yes — valid: it would be used and caught up (1 change)\n"))
    }
}
