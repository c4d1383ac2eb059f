import Foundation
import Strata

/// P5 (warm start) and P5b (warm start → first page), from the snapshot P9 wrote.
extension Benchmark {
    /// Runs the warm starts and returns the last one's main context (for M1 and P7).
    func warmStartScenarios() async throws -> MainContext {
        guard let snapshotPath else { throw BenchmarkError("no snapshot") }
        let rawPath = try file(.raw), strataPath = try file(.strata)
        var warm = ScenarioResult(id: "P5", title: "warm start: open + main context filled from the snapshot",
                                  target: "≤ 0.6× raw; ≤ 0.2× GRDB fetchAll", [.ratio(.raw, 0.6), .fasterGRDB(0.2)])
        var firstPage = ScenarioResult(id: "P5b", title: "warm start → first 50 \"unread, newest first\" on main",
                                       target: "≤ 0.05× raw fetch-all", [.ratio(.raw, 0.05)])
        let expectedPage = DataSet.newestFirst(data.articles.filter { !$0.isRead }).map(\.id)
        var rawFirstPage: [Double] = []
        var filledQuery: [Double] = []
        var strataTimes: [ProcessTimes] = []
        var kept: WarmStart?
        var outcomes: Set<String> = []
        for repetition in 0..<options.repetitions {
            if let previous = kept {
                try await previous.store.close()
                kept = nil
            }
            try fetchAllReferences(into: &warm)
            firstPage.add(.raw, warm.samples[.raw]!.last!)
            let (_, rawQuery) = try timed(Region("P5b", .raw, objects: expectedPage.count)) { () throws -> Int in
                let database = try RawDatabase(path: rawPath)
                return try database.count("SELECT count(*) FROM (SELECT * FROM articles WHERE isRead = 0 "
                                          + "ORDER BY published DESC LIMIT 50)")
            }
            rawFirstPage.append(rawQuery.milliseconds)

            let region = Region("P5", .strata, objects: articles.count)
            region.begin()
            let times = ProcessTimes.now()
            let start = ContinuousClock.now
            var page: [Article] = [], shown: ContinuousClock.Instant?
            let opened = try await StrataPeer.openWarm(strataPath, snapshot: snapshotPath) { articles in
                page = articles
                shown = ContinuousClock.now
            }
            let filled = ContinuousClock.now
            let spent = ProcessTimes.now().since(times)
            region.end()
            strataTimes.append(spent)
            let readable = try shown ?? { throw BenchmarkError("the first screen was not shown") }()
            try expect(opened.showedFirstScreenEarly, "P5b's first screen is shown from the archive's first chunk")
            warm.add(.strata, filled - start)
            firstPage.add(.strata, readable - start)
            outcomes.insert("\(opened.outcome)")
            try expect(page.map(\.id) == expectedPage, "P5b reads the 50 newest unread articles, newest first")
            let asked = ContinuousClock.now
            let fromContext = try opened.mainContext.objects(matching: StrataPeer.unreadQuery(newest: true))
            filledQuery.append((ContinuousClock.now - asked).milliseconds)
            try expect(fromContext == page, "P5b's first screen is what the filled main context answers")
            try expect(opened.mainContext.registeredCount(Article.self) == articles.count, "warm start holds every article")
            kept = opened
            log("P5 repetition \(repetition + 1): raw \(format(warm, .raw)), GRDB Codable \(format(warm, .grdb)), GRDB "
                + "hand-written \(format(warm, .grdbHandWritten)), Strata \(format(filled - start)) (\(opened.outcome)), "
                + "first page \(format(readable - start)); Strata's CPU: \(spent.description)")
        }
        warm.notes.append("snapshot outcome: " + outcomes.sorted().joined(separator: ", "))
        ProcessTimes.record(strataTimes, in: &warm)
        firstPage.details["raw open + first-50 SQL query ms"] = Statistics(rawFirstPage)?.median
        firstPage.details["the same page from the filled main context ms"] = Statistics(filledQuery)?.median
        firstPage.notes.append("Store.openWarm(…firstScreen:) shows the page from the archive's first chunk (Article.snapshotOrder: "
                               + "published descending), checked and found current, before the main context is filled")
        if wants("P5") { record(warm) }
        if wants("P5b") { record(firstPage) }
        guard let kept else { throw BenchmarkError("no warm start") }
        return kept.mainContext
    }
}
