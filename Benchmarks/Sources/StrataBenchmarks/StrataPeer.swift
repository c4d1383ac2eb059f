import Foundation
import Strata

/// The article as a Strata entity: resident, so the main context holds every one of them, with
/// the same (feedID, isRead) index the SQL peers have. No full-text attributes: the raw and GRDB
/// peers keep no FTS table either, and an FTS5 index would add its own write cost to P1/P7.
struct Article: Entity, Equatable {
    var id: String
    var feedID: Int64
    var title: String
    var summary: String
    var url: URL
    var published: Date
    var isRead: Bool
    var isStarred: Bool

    static let tableName = "articles"
    static let indexes = [EntityIndex(["feedID", "isRead"])]
    static let isResident = true
    /// The reader opens on its newest articles: snapshots keep them first (P5b).
    static let snapshotOrder = [Attribute("published").descending]
}

extension Article: ArticleFields {}

/// The Strata peer: the public API only, default configuration (WAL, `synchronous=NORMAL`).
@MainActor
enum StrataPeer {
    static let entities: [any Entity.Type] = [Article.self]

    /// The defaults (WAL, `synchronous=NORMAL`), with Strata's informational log lines off so
    /// that they do not interleave with the benchmark's progress.
    static var configuration: StoreConfiguration {
        var configuration = StoreConfiguration.default
        configuration.logger.logLevel = .warning
        return configuration
    }

    static func open(_ path: String) async throws -> Store {
        try await Store.open(at: path, entities: entities, configuration: configuration)
    }

    static func openWarm(_ path: String, snapshot: String) async throws -> WarmStart {
        try await Store.openWarm(at: path, snapshot: snapshot, entities: entities, configuration: configuration)
    }

    /// P10, P5f and M1f: a store of ``SearchArticle``s.
    static func openSearch(_ path: String) async throws -> Store {
        try await Store.open(at: path, entities: [SearchArticle.self], configuration: configuration)
    }

    static func openSearchWarm(_ path: String, snapshot: String) async throws -> WarmStart {
        try await Store.openWarm(at: path, snapshot: snapshot, entities: [SearchArticle.self], configuration: configuration)
    }

    /// P5 and P5b: a warm start that shows the first screen ("unread, newest first") as soon as
    /// it can; `showing` gets its values, built.
    static func openWarm(_ path: String, snapshot: String, showing: @escaping @MainActor ([Article]) -> Void)
        async throws -> WarmStart {
        try await Store.openWarm(at: path, snapshot: snapshot, entities: entities, configuration: configuration,
                                 firstScreen: unreadQuery(newest: true)) { showing(Array($0)) }
    }

    /// P1: one worker context inserts and saves each batch; done when the root has persisted
    /// everything (the change-log triggers run for every row).
    /// Returns each save's store sequence and the instant just before `save()` was called.
    @discardableResult
    static func importThroughWorker<E: Entity>(_ batches: [[E]], into store: Store, name: String = "import") async throws
        -> [(sequence: UInt64, saved: ContinuousClock.Instant)] {
        let worker = store.makeWorkerContext(name: name)
        var saves: [(sequence: UInt64, saved: ContinuousClock.Instant)] = []
        for batch in batches {
            saves.append(try await worker.perform { worker in
                for object in batch { try worker.insert(object) }
                let saved = ContinuousClock.now
                guard let submission = try worker.save() else { throw BenchmarkError("an import batch saved nothing") }
                return (submission.sequence, saved)
            })
        }
        try await store.persist()
        return saves
    }

    /// P2: the time a worker's `save()` of `batch` takes to return (inserting is not timed).
    /// P2: how long the worker's `save()` of `batch` takes, and its next call after it (a read of
    /// one object), which applies what the save handed over to the worker's own copies.
    static func timeWorkerSave(_ batch: [Article], into store: Store) async throws -> (save: Duration, nextCall: Duration) {
        let worker = store.makeWorkerContext(name: "save")
        return try await worker.perform { worker in
            for article in batch { try worker.insert(article) }
            // Under callgrind the region counts every thread's work while `save()` runs: the
            // root's writer starts committing meanwhile, as it does in the timed run.
            let region = Region("P2", .strata, objects: batch.count)
            region.begin()
            let start = ContinuousClock.now
            try worker.save()
            let duration = ContinuousClock.now - start
            region.end()
            let read = ContinuousClock.now
            guard worker.object(Article.self, id: batch[0].id) != nil else { throw BenchmarkError("P2: the worker lost what it saved") }
            return (duration, ContinuousClock.now - read)
        }
    }

    /// P8b: for each feed, a list screen's two reads — the unread count and the first 50 unread,
    /// newest first — from memory.
    /// P8b as a list screen asks it: the count, and the first page as lazy results (IDs and rows;
    /// a table view builds the values of the cells it shows).
    static func listScreens(_ feeds: [Int64], in main: MainContext) throws -> ListScreens {
        var screens = ListScreens()
        for feed in feeds {
            screens.add(count: try main.count(matching: unreadQuery(feed: feed)),
                        pageIDs: try main.results(matching: unreadQuery(feed: feed, newest: true)).ids)
        }
        return screens
    }

    /// P8b with every value of every page built (`objects(matching:)`): reported beside it.
    static func listScreensBuildingValues(_ feeds: [Int64], in main: MainContext) throws -> ListScreens {
        var screens = ListScreens()
        for feed in feeds {
            screens.add(count: try main.count(matching: unreadQuery(feed: feed)),
                        page: try main.objects(matching: unreadQuery(feed: feed, newest: true)))
        }
        return screens
    }

    /// "Unread of feed F" as a screen asks it; `newest` sorts by date and takes the first 50.
    static func unreadQuery(feed: Int64? = nil, newest: Bool = false) -> Query<Article> {
        var filter = Attribute("isRead") == false
        if let feed { filter = Attribute("feedID") == feed && filter }
        return newest ? Query(where: filter, sortedBy: [Attribute("published").descending], limit: 50)
            : Query(where: filter)
    }
}

/// The row codec written by hand (`Entity.encode(row:)` and `init(row:)`, in schema order — the
/// declaration order), as an app that cares about launch and save time would write it: saves,
/// merges and warm and cold starts skip runtime `Codable`, like GRDB's hand-written record.
extension Article {
    func encode(row: inout RowWriter) throws {
        try row.write(id)
        try row.write(feedID)
        try row.write(title)
        try row.write(summary)
        try row.write(url)
        try row.write(published)
        try row.write(isRead)
        try row.write(isStarred)
    }

    init(row: inout RowReader) throws {
        id = try row.read()
        feedID = try row.read()
        title = try row.read()
        summary = try row.read()
        url = try row.read()
        published = try row.read()
        isRead = try row.read()
        isStarred = try row.read()
    }
}
