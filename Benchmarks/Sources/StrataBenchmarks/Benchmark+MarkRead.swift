import Foundation
import GRDB
import Strata

/// P7: mark 10,000 IDs read, on the warm-started main context.
extension Benchmark {
    func markReadScenario(_ main: MainContext) async throws {
        let unread = data.unreadIDs()
        // Every repetition marks a disjoint slice of unread articles, so each really changes rows.
        let count = min(10_000, articles.count / 10, unread.count / options.repetitions)
        var result = ScenarioResult(id: "P7", title: "mark \(count) IDs read: committed + main patched + change out",
                                    target: "≤ 1.2× raw UPDATE…IN; ≤ 0.25× GRDB load-modify-save",
                                    [.ratio(.raw, 1.2), .fasterGRDB(0.25)])
        let raw = try RawDatabase(path: try file(.raw))
        let codable = try GRDBPeer.open(try file(.grdb), create: false)
        let handWritten = try GRDBPeer.open(try file(.grdbHandWritten), create: false)
        var delivered = 0
        let observation = main.onChange { change in delivered += change.updated(Article.self).count }
        defer { observation.cancel() }
        let initiallyRead = articles.count - unread.count
        for repetition in 0..<options.repetitions {
            let ids = Array(unread[(repetition * count)..<((repetition + 1) * count)])
            try measure(&result, .raw, objects: count) { try raw.markRead(ids) }
            try measure(&result, .grdb, objects: count) { try GRDBPeer.markRead(GRDBArticle.self, ids, in: codable) }
            try measure(&result, .grdbHandWritten, objects: count) {
                try GRDBPeer.markRead(GRDBHandWrittenArticle.self, ids, in: handWritten)
            }
            delivered = 0
            try await measure(&result, .strata, objects: count) {
                let submission = try await main.updateAll(Article.self, ids: ids, set: ["isRead": true])
                try await submission.committed()
            }
            try expect(delivered == count, "the change set names \(count) updated articles (got \(delivered))")
            try expect(main.object(Article.self, id: ids[0])?.isRead == true, "the main context is patched")
            let expectedRead = initiallyRead + (repetition + 1) * count
            try expect(try raw.count("SELECT count(*) FROM articles WHERE isRead = 1") == expectedRead, "raw P7 count")
            for pool in [codable, handWritten] {
                try expect(try GRDBPeer.count(pool, where: "isRead = 1") == expectedRead, "GRDB P7 count")
            }
            try expect(try await main.store.count(Query<Article>(where: Attribute("isRead") == true)) == expectedRead,
                       "Strata P7 count")
            log("P7 repetition \(repetition + 1): raw \(format(result, .raw)), GRDB Codable \(format(result, .grdb)), "
                + "GRDB hand-written \(format(result, .grdbHandWritten)), Strata \(format(result, .strata))")
        }
        record(result)
    }
}
