import Foundation

/// One article as every peer sees it: the plain struct the raw `sqlite3` peer reads into, and
/// the source of the Strata entity and the GRDB record (same values, converted before timing).
struct ArticleData: Sendable, Equatable, Codable {
    var id: String
    var feedID: Int64
    var title: String
    var summary: String
    var url: URL
    var published: Date
    var isRead: Bool
    var isStarred: Bool
}

extension ArticleData: ArticleFields {}

/// The eight fields of an article, as every peer's type declares them: each type gets
/// `init(_:)` from an ``ArticleData`` through its memberwise initializer (converted before timing).
protocol ArticleFields {
    var id: String { get }
    var isRead: Bool { get set }
    init(id: String, feedID: Int64, title: String, summary: String, url: URL, published: Date, isRead: Bool, isStarred: Bool)
}

extension ArticleFields {
    init(_ article: ArticleData) {
        self.init(id: article.id, feedID: article.feedID, title: article.title, summary: article.summary, url: article.url,
                  published: article.published, isRead: article.isRead, isStarred: article.isStarred)
    }
}

/// A small, fast, seedable generator (SplitMix64): the same seed gives the same articles on
/// every machine and every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The deterministic data set: `count` articles spread over `feeds` feeds, about 30% read and
/// 5% starred, published a minute or so apart.
struct DataSet: Sendable {
    static let feeds: Int64 = 100
    let articles: [ArticleData]

    /// The words titles and summaries are made of (P10 picks its searches among them).
    static var vocabulary: [String] { words }

    private static let words = [
        "swift", "sqlite", "layered", "store", "context", "merge", "snapshot", "warm", "start", "index",
        "query", "feed", "reader", "article", "release", "notes", "concurrency", "actor", "memory", "disk",
        "latency", "journal", "commit", "worker", "import", "schema", "migration", "compression", "frame", "page",
        "cache", "graph", "object", "value", "stream", "change", "token", "log", "benchmark", "median",
    ]

    init(count: Int, seed: UInt64 = 0x5EED_2024) {
        var random = SplitMix64(seed: seed)
        let base = Date(timeIntervalSinceReferenceDate: 700_000_000)
        var articles: [ArticleData] = []
        articles.reserveCapacity(count)
        for index in 0..<count {
            let feed = Int64(random.next(upperBound: UInt64(Self.feeds)))
            let title = Self.sentence(length: 40, using: &random)
            let summary = Self.sentence(length: 200, using: &random)
            let slug = String(decoding: title.utf8.prefix(24).map { $0 == UInt8(ascii: " ") ? UInt8(ascii: "-") : $0 }, as: UTF8.self)
            articles.append(ArticleData(
                id: Self.identifier(index),   // "article-000123": 14 characters
                feedID: feed,
                title: title,
                summary: summary,
                url: URL(string: "https://feed\(feed).example.com/posts/\(index)/\(slug)")!,
                published: base.addingTimeInterval(Double(index) * 60 + Double(random.next(upperBound: 60 as UInt64))),
                isRead: random.next(upperBound: 10 as UInt64) < 3,
                isStarred: random.next(upperBound: 20 as UInt64) == 0))
        }
        self.articles = articles
    }

    /// Words joined by spaces, cut to exactly `length` characters, first letter capitalized.
    private static func sentence(length: Int, using random: inout SplitMix64) -> String {
        var text = ""
        while text.utf8.count < length {
            if !text.isEmpty { text += " " }
            text += words[Int(random.next(upperBound: UInt64(words.count)))]
        }
        return String(text.utf8.prefix(length))!.capitalizedFirst
    }

    static func identifier(_ index: Int) -> String {
        let digits = String(index)
        return "article-" + String(repeating: "0", count: max(0, 6 - digits.utf8.count)) + digits
    }

    /// IDs of articles that are unread in the data set, in a fixed shuffled order: P7 takes
    /// disjoint slices of it, one per repetition, so that every repetition really changes rows.
    func unreadIDs() -> [String] {
        var random = SplitMix64(seed: 7)
        return articles.filter { !$0.isRead }.map(\.id).shuffled(using: &random)
    }

    /// The 100 new articles a P3 probe saves (IDs that never collide with the data set's).
    static func probeArticles(round: Int, count: Int = 100) -> [ArticleData] {
        (0..<count).map { index in
            ArticleData(id: "probe-\(round)-\(index)", feedID: Int64(index) % feeds, title: "Probe \(round) \(index)",
                        summary: "A probe article saved while an import persists.",
                        url: URL(string: "https://probe.example.com/\(round)/\(index)")!,
                        published: Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(round * count + index)),
                        isRead: false, isStarred: false)
        }
    }
}

extension String {
    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
