import Foundation
import Strata
import StrataTestSupport
import Testing

/// The RSS reader's article, as the tests store it.
struct Article: Entity, Equatable {
    var id: String
    var feedID: Int64
    var title: String
    var summary: String?
    var url: URL
    var published: Date
    var isRead: Bool
    var isStarred: Bool

    static let tableName = "articles"
    static let columnNames = ["id": "uniqueID"]
    static let indexes = [EntityIndex(["feedID", "isRead"])]
    static let fullTextAttributes = ["title", "summary"]

    static func make(_ index: Int, feed: Int64? = nil, read: Bool = false) -> Article {
        Article(id: "article-\(index)", feedID: feed ?? Int64(index % 10), title: "Title \(index)",
                summary: index % 3 == 0 ? nil : "Summary of article \(index)",
                url: URL(string: "https://example.com/\(index)")!,
                published: Date(timeIntervalSinceReferenceDate: Double(index) * 60), isRead: read, isStarred: false)
    }
}

struct Feed: Entity, Equatable {
    var id: Int64
    var name: String
    static let isResident = true
}

/// Collects every SQL statement a store runs (`sqlite3_trace_v2`), so tests can assert on what
/// reached SQLite.
final class StatementLog: Sendable {
    private let lines = LockedLines()

    var observer: @Sendable (String) -> Void { { [lines] sql in lines.append(sql) } }
    var statements: [String] { lines.all }
    func clear() { lines.clear() }
    func count(where predicate: (String) -> Bool) -> Int { statements.filter(predicate).count }

    private final class LockedLines: @unchecked Sendable {
        // Safe: `values` is only read or written while `lock` is held.
        private var values: [String] = []
        private let lock = NSLock()
        func append(_ line: String) { lock.lock(); values.append(line); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return values }
        func clear() { lock.lock(); values.removeAll(); lock.unlock() }
    }
}

func openStore(_ path: String, entities: [any Entity.Type] = [Article.self, Feed.self], log: StatementLog? = nil,
               migrations: [Migration] = [], configure: (inout StoreConfiguration) -> Void = { _ in }) async throws -> Store {
    var configuration = StoreConfiguration()
    configuration.statementObserver = log?.observer
    configure(&configuration)
    return try await Store.open(at: path, entities: entities, migrations: migrations, configuration: configuration)
}

/// Commits `objects` as one change set (a test's seed) and returns the store's token after it.
@discardableResult
func seed(_ store: Store, with objects: [any Entity]) async throws -> ChangeToken {
    var changes = ChangeSet()
    for object in objects { changes.insert(object) }
    try await store.submit(changes).committed()
    return try await store.currentChangeToken()
}
