import Foundation
import Strata

/// What a main context shows, in one pass: a fingerprint (FNV-1a, 64-bit) of every feed and
/// article in ID order, and the counts — to check that a warm start, a cold start and the session
/// before them show the same data.
struct ContentDigest: Equatable {
    var digest: String
    var feeds: Int
    var articles: Int
    var unread: Int
    var starred: Int

    @MainActor
    init(_ context: MainContext) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        func add(_ text: String) {
            for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            hash = (hash ^ 0x1F) &* 0x0000_0100_0000_01B3
        }
        let feeds = context.objects(Feed.self)
        for feed in feeds {
            add(String(feed.id)); add(feed.title); add(feed.url.absoluteString); add(feed.category)
        }
        let articles = context.objects(Article.self)
        var unread = 0, starred = 0
        for article in articles {
            add(article.id); add(String(article.feedID)); add(article.title); add(article.summary)
            add(article.url.absoluteString); add(String(article.published.timeIntervalSinceReferenceDate))
            add(article.isRead ? "1" : "0"); add(article.isStarred ? "1" : "0")
            if !article.isRead { unread += 1 }
            if article.isStarred { starred += 1 }
        }
        let digits = String(hash, radix: 16)
        digest = String(repeating: "0", count: 16 - digits.count) + digits
        self.feeds = feeds.count
        self.articles = articles.count
        self.unread = unread
        self.starred = starred
    }
}
