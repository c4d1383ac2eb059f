import Strata

/// The reader's live counts — articles, unread, starred, unread per feed — kept current from the
/// main context's change notifications (``MainContext/onChange(_:)``), never by re-querying.
@MainActor
final class LiveCounts {
    private struct State {
        var feedID: Int64
        var isRead: Bool
        var isStarred: Bool
    }

    private let context: MainContext
    private var states: [String: State] = [:]
    private var observation: ChangeObservation?
    private(set) var unread = 0
    private(set) var starred = 0
    private(set) var unreadByFeed: [Int64: Int] = [:]
    /// How many change notifications touched articles.
    private(set) var notifications = 0
    /// Called after every change that touched articles.
    var onUpdate: (@MainActor () -> Void)?

    var articles: Int { states.count }

    init(context: MainContext) {
        self.context = context
        for article in context.objects(Article.self) { set(article.id, article) }
        observation = context.onChange { [weak self] change in self?.apply(change) }
    }

    func cancel() { observation?.cancel() }

    private func apply(_ change: ContextChange) {
        guard change.touches(Article.self) else { return }
        for id in change.deleted(Article.self) { set(id, nil) }
        for id in change.inserted(Article.self) { set(id, context.object(Article.self, id: id)) }
        for id in change.updated(Article.self).keys { set(id, context.object(Article.self, id: id)) }
        notifications += 1
        onUpdate?()
    }

    private func set(_ id: String, _ article: Article?) {
        if let old = states[id] {
            if !old.isRead { unread -= 1; unreadByFeed[old.feedID, default: 0] -= 1 }
            if old.isStarred { starred -= 1 }
        }
        guard let article else {
            states[id] = nil
            return
        }
        states[id] = State(feedID: article.feedID, isRead: article.isRead, isStarred: article.isStarred)
        if !article.isRead { unread += 1; unreadByFeed[article.feedID, default: 0] += 1 }
        if article.isStarred { starred += 1 }
    }

    /// The IDs of the unread articles, sorted.
    var unreadIDs: [String] { states.filter { !$0.value.isRead }.keys.sorted() }
}
