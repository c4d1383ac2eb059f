import Strata

/// The reader's live counts — articles, unread, starred, unread per feed — kept current from the
/// main context's change notifications (``MainContext/onChange(_:)``).
///
/// Each notification that touched articles or feeds recounts from the main context's in-memory
/// indexes — `(feedID, isRead)` per feed, `isStarred` — in constant time per feed, whatever the
/// number of articles it names: no article value is built, so marking 10,000 articles read costs
/// the counts as little as marking one.
@MainActor
final class LiveCounts {
    private let context: MainContext
    private var observation: ChangeObservation?
    private var feedIDs: [Int64] = []
    private(set) var articles = 0
    private(set) var unread = 0
    private(set) var starred = 0
    private(set) var unreadByFeed: [Int64: Int] = [:]
    /// How many change notifications touched articles.
    private(set) var notifications = 0
    /// Called after every change that touched articles.
    var onUpdate: (@MainActor () -> Void)?

    init(context: MainContext) {
        self.context = context
        feedIDs = context.objects(Feed.self).map(\.id)
        recount()
        observation = context.onChange { [weak self] change in self?.apply(change) }
    }

    func cancel() { observation?.cancel() }

    private func apply(_ change: ContextChange) {
        if change.touches(Feed.self) { feedIDs = context.objects(Feed.self).map(\.id) }
        guard change.touches(Article.self) || change.touches(Feed.self) else { return }
        recount()
        if change.touches(Article.self) {
            notifications += 1
            onUpdate?()
        }
    }

    private func recount() {
        articles = context.registeredCount(Article.self)
        var byFeed: [Int64: Int] = [:]
        for feedID in feedIDs {
            byFeed[feedID] = count(Attribute("feedID") == feedID && Attribute("isRead") == false)
        }
        unreadByFeed = byFeed
        unread = byFeed.values.reduce(0, +)
        starred = count(Attribute("isStarred") == true)
    }

    /// The held articles matching `filter`. The filters are fixed and name declared attributes:
    /// a failure is a bug of the demo, not a condition to recover from.
    private func count(_ filter: Filter) -> Int {
        do {
            return try context.count(matching: Query<Article>(where: filter))
        } catch {
            preconditionFailure("live counts: \(error)")
        }
    }

    /// The IDs of the unread articles, sorted.
    var unreadIDs: [String] {
        get throws {
            try context.ids(matching: Query<Article>(where: Attribute("isRead") == false)).sorted()
        }
    }
}
