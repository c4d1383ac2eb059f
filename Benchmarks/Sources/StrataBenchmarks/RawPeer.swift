import CSQLiteBench
import Foundation

/// The raw `sqlite3` reference: hand-written C API calls, prepared statements, no abstraction.
/// What a careful programmer would write by hand, and the floor the other peers are held to.
final class RawDatabase {
    let handle: OpaquePointer

    /// The table every peer stores articles in (GRDB's stores `published` as text, its default).
    static func schemaSQL(publishedType: String = "REAL") -> String {
        """
        CREATE TABLE articles (id TEXT NOT NULL PRIMARY KEY, feedID INTEGER NOT NULL, title TEXT NOT NULL,
            summary TEXT NOT NULL, url TEXT NOT NULL, published \(publishedType) NOT NULL,
            isRead INTEGER NOT NULL, isStarred INTEGER NOT NULL);
        CREATE INDEX articles_feedID_isRead ON articles (feedID, isRead);
        """
    }

    static let columns = "id, feedID, title, summary, url, published, isRead, isStarred"

    /// Opens (or creates) the file in WAL mode with `synchronous=NORMAL`, as every peer does.
    init(path: String) throws {
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw BenchmarkError("sqlite3_open_v2(\(path)) failed: \(code)")
        }
        handle = db
        try execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
    }

    deinit { sqlite3_close_v2(handle) }

    static var version: String { String(cString: sqlite3_libversion()) }

    func check(_ code: Int32, _ what: @autoclosure () -> String) throws {
        guard code == SQLITE_OK || code == SQLITE_DONE || code == SQLITE_ROW else {
            throw BenchmarkError("\(what()): \(String(cString: sqlite3_errmsg(handle))) (\(code))")
        }
    }

    func execute(_ sql: String) throws {
        try check(sqlite3_exec(handle, sql, nil, nil, nil), sql)
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        try check(sqlite3_prepare_v2(handle, sql, -1, &statement, nil), sql)
        guard let statement else { throw BenchmarkError("no statement in \(sql)") }
        return statement
    }

    private func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            _ = sqlite3_bind_text(statement, index, bytes.baseAddress, Int32(bytes.count), bench_sqlite_transient())
        }
    }

    // MARK: Operations

    /// P1: one prepared INSERT in a loop, inside one transaction.
    func insertAll(_ articles: [ArticleData]) throws {
        try execute("BEGIN IMMEDIATE")
        let statement = try prepare("INSERT INTO articles (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(statement) }
        for article in articles {
            bind(statement, 1, article.id)
            sqlite3_bind_int64(statement, 2, article.feedID)
            bind(statement, 3, article.title)
            bind(statement, 4, article.summary)
            bind(statement, 5, article.url.absoluteString)
            sqlite3_bind_double(statement, 6, article.published.timeIntervalSinceReferenceDate)
            sqlite3_bind_int64(statement, 7, article.isRead ? 1 : 0)
            sqlite3_bind_int64(statement, 8, article.isStarred ? 1 : 0)
            try check(sqlite3_step(statement), "insert")
            sqlite3_reset(statement)
        }
        try execute("COMMIT")
    }

    private static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    private func readArticles(_ statement: OpaquePointer) throws -> [ArticleData] {
        var result: [ArticleData] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { try check(code, "select"); break }
            result.append(ArticleData(
                id: Self.text(statement, 0),
                feedID: sqlite3_column_int64(statement, 1),
                title: Self.text(statement, 2),
                summary: Self.text(statement, 3),
                url: URL(string: Self.text(statement, 4))!,
                published: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, 5)),
                isRead: sqlite3_column_int64(statement, 6) != 0,
                isStarred: sqlite3_column_int64(statement, 7) != 0))
        }
        sqlite3_reset(statement)
        return result
    }

    /// P5/P6 reference: every row into structs.
    func fetchAll() throws -> [ArticleData] {
        let statement = try prepare("SELECT \(Self.columns) FROM articles")
        defer { sqlite3_finalize(statement) }
        return try readArticles(statement)
    }

    /// P8 reference: "unread of feed F" through the (feedID, isRead) index, for each feed.
    func unreadOfFeeds(_ feeds: [Int64]) throws -> Int {
        let statement = try prepare("SELECT \(Self.columns) FROM articles WHERE feedID = ? AND isRead = 0")
        defer { sqlite3_finalize(statement) }
        var total = 0
        for feed in feeds {
            sqlite3_bind_int64(statement, 1, feed)
            total += try readArticles(statement).count
        }
        return total
    }

    /// P8b reference: for each feed, a list screen's two statements (each prepared once): the
    /// unread count, and the first 50 unread newest first, rows into structs.
    func listScreens(_ feeds: [Int64]) throws -> ListScreens {
        let unread = "FROM articles WHERE feedID = ? AND isRead = 0"
        let count = try prepare("SELECT count(*) \(unread)")
        defer { sqlite3_finalize(count) }
        let page = try prepare("SELECT \(Self.columns) \(unread) ORDER BY published DESC LIMIT 50")
        defer { sqlite3_finalize(page) }
        var screens = ListScreens()
        for feed in feeds {
            sqlite3_bind_int64(count, 1, feed)
            try check(sqlite3_step(count), "count")
            let unreadCount = Int(sqlite3_column_int64(count, 0))
            sqlite3_reset(count)
            sqlite3_bind_int64(page, 1, feed)
            screens.add(count: unreadCount, page: try readArticles(page))
        }
        return screens
    }

    /// P7 reference: one `UPDATE … WHERE id IN (…)` (chunked only past SQLite's variable limit).
    func markRead(_ ids: [String]) throws {
        let limit = Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
        let chunks = stride(from: 0, to: ids.count, by: limit).map { ids[$0..<min(ids.count, $0 + limit)] }
        if chunks.count > 1 { try execute("BEGIN IMMEDIATE") }
        for chunk in chunks {
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            let statement = try prepare("UPDATE articles SET isRead = 1 WHERE id IN (\(placeholders))")
            defer { sqlite3_finalize(statement) }
            for (offset, id) in chunk.enumerated() { bind(statement, Int32(offset + 1), id) }
            try check(sqlite3_step(statement), "update")
        }
        if chunks.count > 1 { try execute("COMMIT") }
    }

    /// P10 reference: a search as Strata renders it for FTS5, on Strata's own file (the raw peer
    /// keeps no FTS table), IDs in order.
    func searchIDs(_ search: SearchQuery) throws -> [String] {
        let (sql, match) = search.sql
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        bind(statement, 1, match)
        var ids: [String] = []
        while true {
            let code = sqlite3_step(statement)
            guard code == SQLITE_ROW else {
                try check(code, sql)
                return ids
            }
            ids.append(String(cString: sqlite3_column_text(statement, 0)))
        }
    }

    func count(_ sql: String) throws -> Int {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        try check(sqlite3_step(statement), sql)
        return Int(sqlite3_column_int64(statement, 0))
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
