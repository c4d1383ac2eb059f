import Foundation
import Strata
import StrataCLICore
import StrataTestSupport

/// A small, deterministic reader store made with the demo's model: 3 feeds and 24 generated
/// articles (seed 7), two of them then starred, and a snapshot of its main context.
///
/// The store is built in a subdirectory and then copied: the copies are files no connection has
/// open, so nothing but the command under test can touch them.
@MainActor
final class ReaderFixture {
    let scratch: TemporaryDirectory
    let store: String
    let snapshot: String

    static let generator = DataGenerator(seed: 7, feeds: 3, articles: 24)

    init() async throws {
        scratch = try TemporaryDirectory()
        store = scratch.path("reader.sqlite")
        snapshot = scratch.path("reader.snapshot")
        let build = scratch.path("build")
        try FileManager.default.createDirectory(atPath: build, withIntermediateDirectories: true)
        let builtStore = build + "/reader.sqlite", builtSnapshot = build + "/reader.snapshot"
        do {
            let opened = try await Store.open(at: builtStore, entities: [Feed.self, Article.self])
            var changes = ChangeSet()
            for feed in Self.generator.feeds { changes.insert(feed) }
            for index in 0..<Self.generator.articleCount { changes.insert(Self.generator.article(index)) }
            try opened.submit(changes)
            try opened.updateAll(Article.self, ids: ["a-000003", "a-000004"], set: ["isStarred": true])
            let main = opened.mainContext
            try await main.loadResidentEntities()
            try await main.writeSnapshot(to: builtSnapshot)
            // Closing checkpoints the WAL into the database file, which is then complete on its own.
            try await opened.close()
        }
        try FileManager.default.copyItem(atPath: builtStore, toPath: store)
        try FileManager.default.copyItem(atPath: builtSnapshot, toPath: snapshot)
    }

    var directory: String { scratch.url.path }

    /// Opens the store at `path` (the fixture's store by default) as an app would and stars two
    /// more articles (a-000001 and a-000002), committed to the WAL and not checkpointed: the file
    /// holds 2 starred articles, the WAL 4. The store stays open until the caller closes it.
    func openWithChangesInWAL(at path: String? = nil) async throws -> Store {
        let app = try await Store.open(at: path ?? store, entities: [Feed.self, Article.self])
        try app.updateAll(Article.self, ids: ["a-000001", "a-000002"], set: ["isStarred": true])
        try await app.persist()
        return app
    }
    func path(_ name: String) -> String { scratch.path(name) }
}
