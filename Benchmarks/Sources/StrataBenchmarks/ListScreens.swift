/// What P8b's list screens show, summed over the feeds: every screen's unread count, and the
/// IDs of every screen's first page in order — equal across peers, and to what the data set says.
struct ListScreens: Equatable, Sendable {
    var unread = 0
    var pageIDs: [String] = []

    mutating func add(count: Int, page: [some ArticleFields]) {
        add(count: count, pageIDs: page.map(\.id))
    }

    mutating func add(count: Int, pageIDs ids: [String]) {
        unread += count
        pageIDs += ids
    }
}

extension DataSet {
    /// The screens P8b must show: per feed, the unread count and the first page of unread.
    func listScreens(_ feeds: [Int64]) -> ListScreens {
        let unread = Dictionary(grouping: articles.filter { !$0.isRead }, by: \.feedID)
        var screens = ListScreens()
        for feed in feeds {
            let articles = unread[feed] ?? []
            screens.add(count: articles.count, page: Self.newestFirst(articles))
        }
        return screens
    }

    /// A list screen's first page: the first `pageSize` articles by date, newest first (dates
    /// never tie in the data set, so the page is unique).
    static func newestFirst(_ articles: [ArticleData], pageSize: Int = 50) -> [ArticleData] {
        Array(articles.sorted { $0.published > $1.published }.prefix(pageSize))
    }
}
