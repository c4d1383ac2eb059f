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
        var random = SplitMix64(seed: seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        let feedID = Int64(random.below(feedCount) + 1)
        let title = Self.title(&random)
        let summary = Self.summary(&random)
        let published = Self.startDate.addingTimeInterval(Double(index) * 300 + Double(random.below(240)))
        let id = Self.articleID(index)
        return Article(id: id, feedID: feedID, title: title, summary: summary,
                       url: URL(string: "https://feed\(feedID).example.com/posts/\(id)")!, published: published,
                       isRead: random.below(5) == 0, isStarred: false)
    }

    private static func title(_ random: inout SplitMix64) -> String {
        var words = [random.pick(Vocabulary.openers)]
        while words.joined(separator: " ").count < 34 { words.append(random.pick(Vocabulary.words)) }
        var title = words.joined(separator: " ")
        title.replaceSubrange(title.startIndex...title.startIndex, with: title.prefix(1).uppercased())
        return title
    }

    private static func summary(_ random: inout SplitMix64) -> String {
        var text = ""
        while text.count < 190 {
            var sentence = (0..<(6 + random.below(6))).map { _ in random.pick(Vocabulary.words) }.joined(separator: " ")
            sentence.replaceSubrange(sentence.startIndex...sentence.startIndex, with: sentence.prefix(1).uppercased())
            text += (text.isEmpty ? "" : " ") + sentence + "."
        }
        return text
    }
}
