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

    init(_ article: ArticleData) {
        id = article.id
        feedID = article.feedID
        title = article.title
        summary = article.summary
        url = article.url
        published = article.published
        isRead = article.isRead
        isStarred = article.isStarred
    }
}

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

    /// P1: one worker context inserts and saves each batch; done when the root has persisted
    /// everything (the change-log triggers run for every row).
    static func importThroughWorker(_ batches: [[Article]], into store: Store, name: String = "import") async throws {
        let worker = store.makeWorkerContext(name: name)
        for batch in batches {
            try await worker.perform { worker in
                for article in batch { try worker.insert(article) }
                try worker.save()
            }
        }
        try await store.persist()
    }

    /// P2: the time a worker's `save()` of `batch` takes to return (inserting is not timed).
    static func timeWorkerSave(_ batch: [Article], into store: Store) async throws -> Duration {
        let worker = store.makeWorkerContext(name: "save")
        return try await worker.perform { worker in
            for article in batch { try worker.insert(article) }
            let start = ContinuousClock.now
            try worker.save()
            return ContinuousClock.now - start
        }
    }

    /// "Unread of feed F" as a screen asks it; `newest` sorts by date and takes the first 50.
    static func unreadQuery(feed: Int64? = nil, newest: Bool = false) -> Query<Article> {
        var filter = Attribute("isRead") == false
        if let feed { filter = Attribute("feedID") == feed && filter }
        return newest ? Query(where: filter, sortedBy: [Attribute("published").descending], limit: 50)
            : Query(where: filter)
    }
}

/// Warm starts decode the archive by hand rather than through `Decodable` (Strata's opt-in
/// `SnapshotDecodable`, as an app that cares about launch time would adopt it).
extension Article: SnapshotDecodable {
    init(archived row: ArchivedRow) throws {
        id = try row.value("id")
        feedID = try row.value("feedID")
        title = try row.value("title")
        summary = try row.value("summary")
        url = try row.value("url")
        published = try row.value("published")
        isRead = try row.value("isRead")
        isStarred = try row.value("isStarred")
    }
}
