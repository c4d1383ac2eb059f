import Foundation
import Strata

/// An article of the demo's RSS reader.
///
/// Resident: an offline reader shows any article at once, so the main context holds them all
/// (100,000 by default) — which is what the snapshot warm start fills back in at launch. The
/// `(feedID, isRead)` index serves per-feed unread counts, the `isStarred` one the starred count
/// (in SQL, and from the main context's in-memory indexes); titles and summaries are indexed for
/// full-text search. Summaries and URLs are deferred: a warm launch decompresses them when read.
public struct Article: Entity, Equatable {
    public var id: String
    public var feedID: Int64
    public var title: String
    public var summary: String
    public var url: URL
    public var published: Date
    public var isRead: Bool
    public var isStarred: Bool

    public static let tableName = "articles"
    public static let indexes = [EntityIndex(["feedID", "isRead"]), EntityIndex(["published"]), EntityIndex(["isStarred"])]
    public static let fullTextAttributes = ["title", "summary"]
    public static let isResident = true
    /// The reader opens on its newest articles: snapshots keep them first, so that a warm launch
    /// shows the first screen from the archive's first chunk.
    public static let snapshotOrder = [Attribute("published").descending]
    /// The list shows titles; an article's summary and URL are read when it is opened: a warm
    /// launch leaves them compressed until then (two thirds of the archive's bytes).
    public static let deferredAttributes = ["summary", "url"]

    public init(id: String, feedID: Int64, title: String, summary: String, url: URL, published: Date,
                isRead: Bool, isStarred: Bool) {
        self.id = id
        self.feedID = feedID
        self.title = title
        self.summary = summary
        self.url = url
        self.published = published
        self.isRead = isRead
        self.isStarred = isStarred
    }
}

/// The row codec written by hand, in declaration order, as an app that cares about launch and
/// save time writes it: building an article from its row (every read of the main context, every
/// observer that looks at what changed) skips runtime `Codable`.
extension Article {
    public func encode(row: inout RowWriter) throws {
        try row.write(id)
        try row.write(feedID)
        try row.write(title)
        try row.write(summary)
        try row.write(url)
        try row.write(published)
        try row.write(isRead)
        try row.write(isStarred)
    }

    public init(row: inout RowReader) throws {
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
