import Foundation

/// Generates the demo's feeds and articles deterministically from a seed: article `i` is the same
/// whichever worker generates it and in whatever order, so runs are reproducible and checkable.
///
/// Titles are about 40 characters and summaries about 200, drawn from a small technology
/// vocabulary (so that full-text searches such as `swift concurr*` find something). Articles are
/// published five minutes apart from 2024-01-01, and one in five arrives already read.
public struct DataGenerator: Sendable {
    public let seed: UInt64
    public let feedCount: Int
    public let articleCount: Int

    public init(seed: UInt64, feeds: Int, articles: Int) {
        self.seed = seed
        self.feedCount = feeds
        self.articleCount = articles
    }

    /// 2024-01-01T00:00:00Z.
    public static let startDate = Date(timeIntervalSince1970: 1_704_067_200)

    /// Feed `index` (0-based); its ID is `index + 1`.
    public func feed(_ index: Int) -> Feed {
        var random = SplitMix64(seed: seed &* 0x2545_F491_4F6C_DD1D &+ UInt64(index))
        let title = "\(random.pick(Vocabulary.feedAdjectives)) \(random.pick(Vocabulary.feedNouns)) \(index + 1)"
        return Feed(id: Int64(index + 1), title: title,
                    url: URL(string: "https://feed\(index + 1).example.com/rss.xml")!,
                    category: random.pick(Vocabulary.categories))
    }

    /// Every feed.
    public var feeds: [Feed] { (0..<feedCount).map(feed) }

    /// The ID of article `index` (0-based): `a-000001` for index 0.
    public static func articleID(_ index: Int) -> String {
        let digits = String(index + 1)
        return "a-" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// Article `index` (0-based).
    public func article(_ index: Int) -> Article {
        let draws = self.draws(index)
        let id = Self.articleID(index)
        return Article(id: id, feedID: draws.feedID, title: Self.capitalized(draws.title.joined(separator: " ")),
                       summary: draws.summary.map { Self.capitalized($0.joined(separator: " ")) + "." }.joined(separator: " "),
                       url: URL(string: "https://feed\(draws.feedID).example.com/posts/\(id)")!,
                       published: Self.startDate.addingTimeInterval(Double(index) * 300 + Double(draws.jitter)),
                       isRead: draws.isRead, isStarred: false)
    }

    /// How many of the articles arrive unread (not ``Article/isRead``): what the demo's steps 3
    /// and 4 have to work with. It makes every article's random draws, without the strings.
    public var unreadOnArrival: Int {
        (0..<articleCount).reduce(0) { $0 + (draws($1).isRead ? 0 : 1) }
    }

    /// The random draws behind one article, in the order they are made.
    private struct Draws {
        var feedID: Int64
        /// Title words (about 40 characters with spaces), summary sentences (about 200).
        var title: [String]
        var summary: [[String]]
        /// Seconds after the article's five-minute slot.
        var jitter: Int
        var isRead: Bool
    }

    private func draws(_ index: Int) -> Draws {
        var random = SplitMix64(seed: seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        let feedID = Int64(random.below(feedCount) + 1)
        // The vocabulary is ASCII: lengths are UTF-8 byte counts, spaces and periods included.
        var title = [random.pick(Vocabulary.openers)]
        var titleLength = title[0].utf8.count
        while titleLength < 34 {
            title.append(random.pick(Vocabulary.words))
            titleLength += 1 + title[title.count - 1].utf8.count
        }
        var summary: [[String]] = []
        var summaryLength = 0
        while summaryLength < 190 {
            let sentence = (0..<(6 + random.below(6))).map { _ in random.pick(Vocabulary.words) }
            summaryLength += (summary.isEmpty ? 0 : 1) + sentence.reduce(sentence.count) { $0 + $1.utf8.count }
            summary.append(sentence)
        }
        let jitter = random.below(240)
        return Draws(feedID: feedID, title: title, summary: summary, jitter: jitter, isRead: random.below(5) == 0)
    }

    private static func capitalized(_ text: String) -> String {
        text.prefix(1).uppercased() + text.dropFirst()
    }
}
