import Foundation
import Strata
import StrataTestSupport

/// The RSS reader's article, as the sync tests store it: integer keys, so that ID sets travel
/// in the compact form.
struct Article: Entity, Equatable {
    var id: Int64
    var title: String
    var isRead: Bool
    var isStarred: Bool
    var summary: String?

    static func make(_ id: Int64, title: String? = nil) -> Article {
        Article(id: id, title: title ?? "Title \(id)", isRead: false, isStarred: false, summary: nil)
    }
}

/// A feed, with text keys.
struct Feed: Entity, Equatable {
    var id: String
    var name: String
}

/// A store of `Article` and `Feed` at `path`.
func openSyncStore(_ path: String) async throws -> Store {
    try await Store.open(at: path, entities: [Article.self, Feed.self])
}
