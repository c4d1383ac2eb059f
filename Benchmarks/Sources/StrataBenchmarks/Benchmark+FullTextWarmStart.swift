import Foundation
import Strata

/// P5f and M1f: P5's warm start and M1's peak memory for `SearchArticle` — the same articles with
/// title and summary in full text —, so that the main context's full-text index is in them: built
/// off the main actor with the other in-memory indexes from the snapshot's rows (warm) or the
/// fetched rows (cold).
extension Benchmark {
    func fullTextWarmStartScenarios() async throws {
        // Untimed: a store of its own (as P10's) filled through a worker, its snapshot written.
        let directory = try freshDirectory("p5f")
        let path = directory + "/strata-search.sqlite", snapshot = directory + "/search.snapshot"
        let store = try await filledSearchStore(path)
        let summary = try await store.mainContext.writeSnapshot(to: snapshot)
        try await store.close()
        if wants("P5f") { try await fullTextWarmStartScenario(path, snapshot: snapshot) }
        if wants("M1f") {
            try memoryScenario(id: "M1f", title: "peak RSS holding \(articles.count) resident articles with their full-text index",
                               mode: MemoryProbe.searchSuffix, database: path, snapshot: snapshot,
                               snapshotUncompressedBytes: summary.header.uncompressedBytes)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func fullTextWarmStartScenario(_ path: String, snapshot: String) async throws {
        var result = ScenarioResult(id: "P5f", title: "warm start with the full-text index: open + main context filled",
                                    target: "≤ 0.3× raw; ≤ 0.2× GRDB fetchAll", [.ratio(.raw, 0.3), .fasterGRDB(0.2)])
        var strataTimes: [ProcessTimes] = []
        var outcomes: Set<String> = []
        for repetition in 0..<options.repetitions {
            try fetchAllReferences(into: &result)
            let region = Region("P5f", .strata, objects: articles.count)
            region.begin()
            let times = ProcessTimes.now()
            let start = ContinuousClock.now
            let opened = try await StrataPeer.openSearchWarm(path, snapshot: snapshot)
            let filled = ContinuousClock.now
            let spent = ProcessTimes.now().since(times)
            region.end()
            strataTimes.append(spent)
            result.add(.strata, filled - start)
            outcomes.insert("\(opened.outcome)")
            let main = opened.mainContext
            try expect(main.registeredCount(SearchArticle.self) == articles.count, "P5f: the warm start holds every article")
            // The index answers at once: a search of the most frequent word, equal to FTS5's.
            guard let search = SearchQuery.picked(from: data).first else { throw BenchmarkError("P5f: no search") }
            try expect(try main.ids(matching: search.query) == (try await opened.store.ids(search.query)),
                       "P5f: the warm-started full-text index answers as FTS5")
            log("P5f repetition \(repetition + 1): raw \(format(result, .raw)), Strata \(format(filled - start)) "
                + "(\(opened.outcome)); Strata's CPU: \(spent.description)")
            try await opened.store.close()
        }
        result.notes.append("snapshot outcome: " + outcomes.sorted().joined(separator: ", "))
        result.notes.append("SearchArticle (title and summary in full text) in a store of its own; the peers' fetch-all as P5's")
        ProcessTimes.record(strataTimes, in: &result)
        record(result)
    }
}
