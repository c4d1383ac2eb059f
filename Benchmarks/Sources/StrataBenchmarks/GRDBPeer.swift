import Foundation
import GRDB

/// The article as an idiomatic GRDB 7 record: `Codable`, fetchable and persistable (the way
/// most apps use GRDB, and the way the targets are stated). ``GRDBHandWrittenArticle`` is the
/// same record coded by hand.
///
/// One adjustment: the URL is coded as its `absoluteString`, as the raw peer and Strata store it.
/// GRDB's own `URL` conversion goes through `NSURL` bridging, which on Linux costs ~170k
/// instructions per value (callgrind) and would make GRDB's inserts ~2.7× slower than they are
/// with a `String` — a Linux artifact that says nothing about GRDB's design.
struct GRDBArticle: Codable, FetchableRecord, PersistableRecord, ArticleFields, Sendable {
    static let databaseTableName = "articles"

    var id: String
    var feedID: Int64
    var title: String
    var summary: String
    var url: URL
    var published: Date
    var isRead: Bool
    var isStarred: Bool

    enum CodingKeys: String, CodingKey {
        case id, feedID, title, summary, url, published, isRead, isStarred
    }
}

extension GRDBArticle {
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        feedID = try container.decode(Int64.self, forKey: .feedID)
        title = try container.decode(String.self, forKey: .title)
        summary = try container.decode(String.self, forKey: .summary)
        let address = try container.decode(String.self, forKey: .url)
        guard let url = URL(string: address) else {
            throw DecodingError.dataCorruptedError(forKey: .url, in: container, debugDescription: "bad URL \(address)")
        }
        self.url = url
        published = try container.decode(Date.self, forKey: .published)
        isRead = try container.decode(Bool.self, forKey: .isRead)
        isStarred = try container.decode(Bool.self, forKey: .isStarred)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(feedID, forKey: .feedID)
        try container.encode(title, forKey: .title)
        try container.encode(summary, forKey: .summary)
        try container.encode(url.absoluteString, forKey: .url)
        try container.encode(published, forKey: .published)
        try container.encode(isRead, forKey: .isRead)
        try container.encode(isStarred, forKey: .isStarred)
    }
}

/// Either GRDB record: the Codable one or the hand-written one. Every operation below is the
/// same generic code for both, called with the concrete type so that it is specialized for each.
protocol GRDBRecord: ArticleFields, FetchableRecord, PersistableRecord, Sendable {
    /// The column this record's figures go in.
    static var peer: Peer { get }
}

extension GRDBArticle: GRDBRecord {
    static var peer: Peer { .grdb }
}

/// The GRDB peer: a `DatabasePool` (WAL) with `synchronous=NORMAL`.
enum GRDBPeer {
    static func open(_ path: String, create: Bool) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        if create {
            try pool.write { db in try db.execute(sql: RawDatabase.schemaSQL(publishedType: "TEXT")) }
        }
        return pool
    }

    /// P1 / P2: `record.insert` for each article, in one write transaction.
    static func insertAll<Record: GRDBRecord>(_ articles: [Record], into pool: DatabasePool) throws {
        try pool.write { db in
            for article in articles { try article.insert(db) }
        }
    }

    /// P5 / P6 reference: open the file and `fetchAll` into records.
    static func openAndFetchAll<Record: GRDBRecord>(_ type: Record.Type, _ path: String) throws -> [Record] {
        let pool = try open(path, create: false)
        return try pool.read { db in try Record.fetchAll(db) }
    }

    /// P7: load, modify and save each object, one by one, in one write transaction.
    static func markRead<Record: GRDBRecord>(_ type: Record.Type, _ ids: [String], in pool: DatabasePool) throws {
        try pool.write { db in
            for id in ids {
                guard var article = try Record.fetchOne(db, key: id) else { continue }
                article.isRead = true
                try article.update(db)
            }
        }
    }

    /// "Unread of feed F" through the query interface.
    private static func unread<Record: GRDBRecord>(_ type: Record.Type, feed: Int64) -> QueryInterfaceRequest<Record> {
        Record.filter(Column("feedID") == feed && Column("isRead") == false)
    }

    /// P8: "unread of feed F", one read per feed (as a screen would ask).
    static func unreadOfFeeds<Record: GRDBRecord>(_ type: Record.Type, _ feeds: [Int64], in pool: DatabasePool) throws -> Int {
        var total = 0
        for feed in feeds {
            total += try pool.read { db in try unread(type, feed: feed).fetchAll(db).count }
        }
        return total
    }

    /// P8b: for each feed, one read with a list screen's two queries — `fetchCount`, and the first
    /// 50 newest first.
    static func listScreens<Record: GRDBRecord>(_ type: Record.Type, _ feeds: [Int64], in pool: DatabasePool) throws -> ListScreens {
        var screens = ListScreens()
        for feed in feeds {
            let (count, page) = try pool.read { db in
                let request = unread(type, feed: feed)
                return (try request.fetchCount(db), try request.order(Column("published").desc).limit(50).fetchAll(db))
            }
            screens.add(count: count, page: page)
        }
        return screens
    }

    static func count(_ pool: DatabasePool, where condition: String = "1") throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM articles WHERE \(condition)") ?? 0 }
    }
}
