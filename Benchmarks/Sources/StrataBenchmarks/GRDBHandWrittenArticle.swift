import Foundation
import GRDB

/// The article as a GRDB record coded by hand, the way an app tuned for speed writes it:
/// `init(row:)` reads the columns by index (GRDB's `fastDecode`, straight from the statement,
/// through a row that `fetchAll` reuses for every row), and `encode(to:)` fills the persistence
/// container directly — no `Codable` on either side. It stands beside the Codable
/// ``GRDBArticle`` so that Strata, whose entity codes its rows by hand too, is compared with the
/// faster of the two.
struct GRDBHandWrittenArticle: GRDBRecord {
    static let databaseTableName = "articles"
    static var peer: Peer { .grdbHandWritten }

    var id: String
    var feedID: Int64
    var title: String
    var summary: String
    var url: URL
    var published: Date
    var isRead: Bool
    var isStarred: Bool
}

extension GRDBHandWrittenArticle {
    /// The columns in the table's order: the query interface selects `*`.
    init(row: Row) throws {
        id = try row.decode(atIndex: 0)
        feedID = try row.decode(atIndex: 1)
        title = try row.decode(atIndex: 2)
        summary = try row.decode(atIndex: 3)
        let address: String = try row.decode(atIndex: 4)
        guard let url = URL(string: address) else { throw BenchmarkError("bad URL \(address)") }
        self.url = url
        published = try row.decode(atIndex: 5)
        isRead = try row.decode(atIndex: 6)
        isStarred = try row.decode(atIndex: 7)
    }

    /// The same values the Codable record stores (the URL as its `absoluteString`, see
    /// ``GRDBArticle``).
    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["feedID"] = feedID
        container["title"] = title
        container["summary"] = summary
        container["url"] = url.absoluteString
        container["published"] = published
        container["isRead"] = isRead
        container["isStarred"] = isStarred
    }
}
