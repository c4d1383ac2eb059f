import Foundation
import Strata

/// P10: full-text searches answered by the main context, in memory, against the same searches
/// through FTS5 — Strata's `store.ids` and the raw C API running the same SQL.
extension Benchmark {
    private static let worstRatio = "worst search in-memory/FTS5"

    func fullTextScenario() async throws {
        let searches = SearchQuery.picked(from: data)
        var result = ScenarioResult(id: "P10", title: "full-text .matches on main, \(searches.count) searches",
                                    target: "each ≤ 2× FTS5; each ≤ 5 ms",
                                    [.detail(Self.worstRatio, 2, unit: "×"), .absolute(5)])
        // Untimed: a store of its own filled through a worker (FTS5's triggers index every row),
        // and its main context loaded.
        let directory = try freshDirectory("p10")
        let path = directory + "/strata-search.sqlite"
        let start = ContinuousClock.now
        let store = try await filledSearchStore(path)
        let main = store.mainContext
        try expect(main.registeredCount(SearchArticle.self) == articles.count, "P10: the main context holds every article")
        let raw = try RawDatabase(path: path)
        log("P10: \(articles.count) articles stored with FTS5 and loaded in \(format(ContinuousClock.now - start))")

        var figures: [String: [Double]] = [:]
        var counts: [Int] = []
        for repetition in 0..<options.repetitions {
            var inMemory: [Double] = [], fts5: [Double] = [], rawTimes: [Double] = []
            counts = []
            for (index, search) in searches.enumerated() {
                let query = search.query
                let (ids, memoryTime) = try timedRuns(Region("P10", .strata, objects: articles.count)) { try main.ids(matching: query) }
                let (sqlIDs, sqlTime) = try await timedRuns(Region("P10", .reference, objects: articles.count)) { try await store.ids(query) }
                let (rawIDs, rawTime) = try timedRuns(Region("P10", .raw, objects: articles.count)) { try raw.searchIDs(search) }
                try expect(ids == sqlIDs && ids == rawIDs,
                           "P10 search \(index + 1) \(search.label): in memory \(ids.count) IDs, FTS5 \(sqlIDs.count), "
                           + "raw \(rawIDs.count), not the same IDs in the same order")
                try expect(!ids.isEmpty, "P10 search \(index + 1) \(search.label) finds nothing")
                counts.append(ids.count)
                inMemory.append(memoryTime)
                fts5.append(sqlTime)
                rawTimes.append(rawTime)
                figures["search \(index + 1) in-memory ms", default: []].append(memoryTime)
                figures["search \(index + 1) FTS5 ms", default: []].append(sqlTime)
            }
            let ratios = zip(inMemory, fts5).map { $0 / $1 }
            result.add(.strata, inMemory.max()!)
            result.add(.raw, rawTimes.max()!)
            figures[Self.worstRatio, default: []].append(ratios.max()!)
            figures["slowest search FTS5 ms", default: []].append(fts5.max()!)
            figures["all searches in-memory ms", default: []].append(inMemory.reduce(0, +))
            figures["all searches FTS5 ms", default: []].append(fts5.reduce(0, +))
            log("P10 repetition \(repetition + 1): in memory slowest \(String(format: "%.2f", inMemory.max()!)) ms, "
                + "all \(String(format: "%.1f", inMemory.reduce(0, +))) ms; FTS5 slowest \(String(format: "%.2f", fts5.max()!)) ms, "
                + "all \(String(format: "%.1f", fts5.reduce(0, +))) ms; worst ratio \(String(format: "%.2f", ratios.max()!))×")
        }
        for (name, values) in figures { result.details[name] = Statistics(values)?.median }
        result.notes.append("searches (IDs found): " + zip(searches, counts).enumerated()
            .map { "\($0.offset + 1) \($0.element.0.label) (\($0.element.1))" }.joined(separator: ", "))
        result.notes.append("Strata: the slowest search on main (MainContext.ids(matching:)); raw: the slowest of the same "
                            + "SQL through the C API on Strata's file; FTS5 per search is Store.ids")
        record(result)
        try await store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A store of `SearchArticle`s at `path` (P10, P5f, M1f), filled through a worker — FTS5's
    /// triggers index every row — and its main context loaded.
    func filledSearchStore(_ path: String) async throws -> Store {
        let store = try await StrataPeer.openSearch(path)
        let objects = data.articles.map(SearchArticle.init)
        let batchSize = (objects.count + 9) / 10
        try await StrataPeer.importThroughWorker(stride(from: 0, to: objects.count, by: batchSize).map {
            Array(objects[$0..<min(objects.count, $0 + batchSize)])
        }, into: store)
        try await store.mainContext.loadResidentEntities()
        return store
    }

    /// Runs `body` once, and four more times when it took under 10 ms (a single run of a
    /// sub-millisecond search is mostly noise); returns its result and the median time in ms.
    private func timedRuns<T>(_ region: Region, _ body: () throws -> T) throws -> (T, Double) {
        var (value, duration) = try timed(region, body)
        var times = [duration.milliseconds]
        while times.count < 5, times[0] < 10 {
            (value, duration) = try timed(region, body)
            times.append(duration.milliseconds)
        }
        return (value, Statistics(times)!.median)
    }

    private func timedRuns<T>(_ region: Region, _ body: () async throws -> T) async throws -> (T, Double) {
        var (value, duration) = try await timed(region, body)
        var times = [duration.milliseconds]
        while times.count < 5, times[0] < 10 {
            (value, duration) = try await timed(region, body)
            times.append(duration.milliseconds)
        }
        return (value, Statistics(times)!.median)
    }
}
