import Foundation
import Strata

/// P10's article: ``Article``'s fields, indexes and order, with its title and summary in full
/// text (an FTS5 table that SQLite's triggers keep). A type and a store of its own, so that the
/// FTS5 table's write cost stays out of P1's, P2's and P7's comparisons with raw and GRDB. Its
/// row codec is the default (`Codable`): P10 times queries, not loading. Its fields are an
/// ``ArticleData``'s, coded at the top level (the same columns as ``Article``'s).
struct SearchArticle: Entity, Equatable {
    var fields: ArticleData
    var id: String { fields.id }

    init(_ fields: ArticleData) { self.fields = fields }
    init(from decoder: any Decoder) throws { fields = try ArticleData(from: decoder) }
    func encode(to encoder: any Encoder) throws { try fields.encode(to: encoder) }

    static let tableName = "search_articles"
    static let indexes = [EntityIndex(["feedID", "isRead"])]
    static let isResident = true
    static let snapshotOrder = [Attribute("published").descending]
    static let fullTextAttributes = ["title", "summary"]
}

/// One of P10's searches: full-text terms, optionally one feed, newest first, optionally the
/// first page only.
struct SearchQuery: Sendable {
    let text: String
    let feed: Int64?
    let limit: Int?

    var query: Query<SearchArticle> {
        var filter = Filter.matches(text)
        if let feed { filter = filter && Attribute("feedID") == feed }
        return Query(where: filter, sortedBy: [Attribute("published").descending], limit: limit)
    }

    var label: String {
        "\"\(text)\"" + (feed.map { " feed \($0)" } ?? "") + (limit.map { " first \($0)" } ?? "")
    }

    /// The same search as SQL, as Strata renders it for FTS5 (`ResolvedQuery.selectSQL`), for the
    /// raw peer; `match` is FTS5's query: each term quoted, prefixes starred, joined by AND.
    var sql: (sql: String, match: String) {
        var sql = "SELECT id FROM search_articles WHERE rowid IN "
            + "(SELECT rowid FROM search_articles_fts WHERE search_articles_fts MATCH ?)"
        if let feed { sql += " AND feedID = \(feed)" }
        sql += " ORDER BY published DESC, id ASC"
        if let limit { sql += " LIMIT \(limit)" }
        let match = text.split(separator: " ").map { word in
            word.hasSuffix("*") ? "\"\(word.dropLast())\"*" : "\"\(word)\""
        }.joined(separator: " AND ")
        return (sql, match)
    }

    /// Ten searches over `data`, picked from its terms' frequencies (deterministic, like the data).
    ///
    /// The titles and summaries are words of a 40-word list, each in about 57% of the articles,
    /// cut to a fixed length: the word a text ends on is often cut short ("concurr"), and those
    /// cut words are the rare terms (0.05–3% of the articles). So: the most frequent word (its
    /// first page), a rare cut word, a middling one, two prefixes, two pairs of terms, and three
    /// searches narrowed to one feed.
    static func picked(from data: DataSet) -> [SearchQuery] {
        let frequencies = documentFrequencies(data.articles)
        let count = data.articles.count
        let words = Set(DataSet.vocabulary)
        let byFrequency = frequencies.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
        let listed = byFrequency.filter { words.contains($0.key) }.map(\.key)
        let cut = byFrequency.filter { !words.contains($0.key) && $0.key.utf8.count >= 3 }
        /// The cut word whose frequency is nearest `share` of the articles.
        func cutWord(_ share: Double) -> String {
            let target = max(1, Double(count) * share)
            return cut.min { abs(Double($0.value) - target) < abs(Double($1.value) - target) }?.key ?? listed[0]
        }
        let common = listed[0], second = listed[1], third = listed[2], least = listed[listed.count - 1]
        let rare = cutWord(0.001), middling = cutWord(0.01)
        let prefix = String(least.prefix(4)) + "*", shortPrefix = String(second.prefix(2)) + "*"
        return [
            SearchQuery(text: common, feed: nil, limit: 50),
            SearchQuery(text: rare, feed: nil, limit: nil),
            SearchQuery(text: middling, feed: nil, limit: nil),
            SearchQuery(text: prefix, feed: nil, limit: 50),
            SearchQuery(text: shortPrefix, feed: nil, limit: 50),
            SearchQuery(text: "\(second) \(least)", feed: nil, limit: nil),
            SearchQuery(text: "\(third) \(middling)*", feed: nil, limit: nil),
            SearchQuery(text: common, feed: 3, limit: nil),
            SearchQuery(text: prefix, feed: 42, limit: nil),
            SearchQuery(text: "\(second) \(third)", feed: 77, limit: nil),
        ]
    }

    /// In how many articles each term occurs (title or summary). The data's text is ASCII letters
    /// and spaces, so FTS5's unicode61 tokens are its lowercased words.
    static func documentFrequencies(_ articles: [ArticleData]) -> [String: Int] {
        var frequencies: [String: Int] = [:]
        for article in articles {
            let terms = Set((article.title + " " + article.summary).lowercased().split { !$0.isLetter && !$0.isNumber })
            for term in terms { frequencies[String(term), default: 0] += 1 }
        }
        return frequencies
    }
}
