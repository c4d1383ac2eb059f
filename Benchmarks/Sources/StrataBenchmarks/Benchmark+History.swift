import Foundation
import Strata

/// H2 (another process's commit → main context), H3 (an idle open store's CPU) and H4 (reading
/// the history through the paged sequence), on one store of the N articles. H1 of issue 41 — P1
/// with the history on against P1 without — has no scenario: the history cannot be turned off.
extension Benchmark {
    private static let p99Of100 = "100 rows: p99 ms"

    func historyScenarios() async throws {
        // Untimed: a store of the N articles, its main context loaded.
        let directory = try freshDirectory("history")
        let path = directory + "/strata.sqlite"
        let store = try await StrataPeer.open(path)
        try await StrataPeer.importThroughWorker(batches, into: store)
        let main = store.mainContext
        try await main.loadResidentEntities()
        try expect(main.registeredCount(Article.self) == articles.count, "H: the main context holds every article")
        if wants("H2") { try await remoteCommitScenario(path, main) }
        if wants("H3") { try await idleScenario(main) }
        if wants("H4") { try await historyReadScenario(store, path) }
        try await store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: H2 — another process's commit, live

    private func remoteCommitScenario(_ path: String, _ main: MainContext) async throws {
        let bulk = options.quick ? 2 : 5
        let plan = [(rows: 1, commits: 50), (rows: 100, commits: 50), (rows: 10_000, commits: bulk)]
        var result = ScenarioResult(id: "H2", title: "another process commits 100 rows → main context, p99",
                                    target: "p99 ≤ 100 ms for 100 rows", [.absolute(100)])
        var figures: [String: [Double]] = [:]
        let arrivals = RemoteArrivals(main)
        defer { arrivals.cancel() }
        for repetition in 0..<options.repetitions {
            let writer = try RemoteWriter(path: path)
            var summary: [String] = []
            for (rows, commits) in plan {
                var latencies: [Double] = [], sinceSave: [Double] = []
                for _ in 0..<commits {
                    arrivals.expect(rows)
                    writer.commit(rows)
                    guard let seen = await arrivals.arrival(timeout: .seconds(10)) else {
                        throw BenchmarkError("H2: a commit of \(rows) rows by the other process never reached the main context")
                    }
                    let (before, committed) = try await writer.committed()
                    latencies.append((Double(seen) - Double(committed)) / 1e6)
                    sinceSave.append((Double(seen) - Double(before)) / 1e6)
                    try await Task.sleep(for: .milliseconds(2))
                }
                let label = rows == 1 ? "1 row" : "\(rows) rows"
                figures["\(label): p50 ms", default: []].append(percentile(latencies, 0.5))
                figures["\(label): p99 ms", default: []].append(percentile(latencies, 0.99))
                figures["\(label): p99 from before the writer's save ms", default: []].append(percentile(sinceSave, 0.99))
                if rows == 100 { result.add(.strata, percentile(latencies, 0.99)) }
                summary.append(String(format: "%@ × %d: p50 %.1f, p99 %.1f ms", label, commits,
                                      percentile(latencies, 0.5), percentile(latencies, 0.99)))
            }
            try writer.finish()
            log("H2 repetition \(repetition + 1): " + summary.joined(separator: "; "))
        }
        let committed = plan.reduce(0) { $0 + $1.rows * $1.commits } * options.repetitions
        try expect(main.registeredCount(Article.self) == articles.count + committed, "H2: the main context holds every remote row")
        try expect(arrivals.foreignChanges == 0, "H2: the main context saw changes of origin other than .remote")
        for (name, values) in figures { result.details[name] = Statistics(values)?.median }
        result.details["remote changes merged"] = Double(arrivals.remoteChanges)
        result.notes.append("the other process: this executable (\(HistoryProbe.childFlag) writer), Store.open on the same "
                            + "file, one worker inserting the rows, save(), persist(); per size \(plan.map { "\($0.commits) × \($0.rows)" }.joined(separator: ", ")) "
                            + "commits, one at a time; latency from the child's CLOCK_MONOTONIC after persist() returned "
                            + "to the main context's onChange handler receiving the last of the rows (origin .remote)")
        record(result)
    }

    // MARK: H3 — an idle open store

    private func idleScenario(_ main: MainContext) async throws {
        let idle: Duration = options.quick ? .seconds(2) : .seconds(10)
        var result = ScenarioResult(id: "H3", title: "CPU of an open, idle store (main context, live query)", unit: "%",
                                    target: "≤ 1% of one core", [.absolute(1)])
        let live = try main.observe(StrataPeer.unreadQuery(feed: 1, newest: true))
        defer { live.cancel() }
        var user: [Double] = [], kernel: [Double] = []
        // Let what came before settle: the file watcher's follow-up looks, merges.
        try await Task.sleep(for: .seconds(1))
        for repetition in 0..<options.repetitions {
            let before = ProcessTimes.now(), start = ContinuousClock.now
            try await Task.sleep(for: idle)
            let spent = ProcessTimes.now().since(before), wall = (ContinuousClock.now - start).milliseconds
            result.add(.strata, (spent.user + spent.system) / wall * 100)
            user.append(spent.user)
            kernel.append(spent.system)
            log("H3 repetition \(repetition + 1): \(spent.description) over \(String(format: "%.0f", wall)) ms idle")
        }
        result.details["CPU ms in user code, median"] = Statistics(user)?.median
        result.details["CPU ms in the kernel, median"] = Statistics(kernel)?.median
        result.details["idle wall ms"] = idle.milliseconds
        result.notes.append("getrusage of the whole process (every thread) around a Task.sleep on the main actor, the store "
                            + "open with its main context holding the articles and one live query; the figure is % of one core")
        record(result)
    }

    // MARK: H4 — reading the history in pages

    private func historyReadScenario(_ store: Store, _ path: String) async throws {
        let count = articles.count
        var result = ScenarioResult(id: "H4", title: "read \(count) history transactions through history(since:)",
                                    unit: "MiB", target: "paged peak-RSS growth ≤ 8 MiB at any history size",
                                    [.absolute(8)])
        // Untimed: one transaction per article (not H2's rows), each a worker's update of isStarred.
        let start = try await store.currentChangeToken()
        let setUp = ContinuousClock.now
        let worker = store.makeWorkerContext(name: "h4-edits")
        let saved = try await worker.fetch(Query<Article>()).filter { !$0.id.hasPrefix("remote-") }
        try expect(saved.count == count, "H4: \(saved.count) articles to update, expected \(count)")
        try await worker.perform { worker in
            for var article in saved {
                article.isStarred.toggle()
                try worker.update(article)
                try worker.save()
            }
        }
        try await store.persist()
        log("H4: \(saved.count) one-update transactions committed in \(format(ContinuousClock.now - setUp))")
        let mib = 1024.0 * 1024.0
        var figures: [String: [Double]] = [:]
        for repetition in 0..<options.repetitions {
            let paged = try HistoryProbe.read(path, since: start, keepsAll: false)
            let all = try HistoryProbe.read(path, since: start, keepsAll: true)
            try expect(paged.transactions == count && paged.ids == count && all.transactions == count,
                       "H4: read \(paged.transactions) transactions of \(paged.ids) IDs, expected \(count)")
            let pagedGrowth = Double(paged.peakBytes - paged.baselinePeakBytes) / mib
            let allGrowth = Double(all.peakBytes - all.baselinePeakBytes) / mib
            result.add(.strata, pagedGrowth)
            result.add(.reference, allGrowth)
            figures["read ms (paged)", default: []].append(paged.seconds * 1000)
            figures["transactions/s (paged)", default: []].append(Double(paged.transactions) / paged.seconds)
            figures["peak RSS before reading MiB", default: []].append(Double(paged.baselinePeakBytes) / mib)
            log("H4 repetition \(repetition + 1): \(paged.transactions) transactions in "
                + String(format: "%.0f ms (%.0f/s); peak RSS growth %.1f MiB paged, %.1f MiB holding them all",
                         paged.seconds * 1000, Double(paged.transactions) / paged.seconds, pagedGrowth, allGrowth))
        }
        for (name, values) in figures { result.details[name] = Statistics(values)?.median }
        result.notes.append("a child process (\(HistoryProbe.childFlag) read) opens the store and iterates "
                            + "history(since:) in pages of 100 from the token before the \(count) updates; the figure is "
                            + "its VmHWM growth while reading (SQLite's page cache included); the reference column the same read "
                            + "keeping every transaction, which grows with the history")
        record(result)
    }
}

/// Watches the main context for changes of origin `.remote` and tells when the rows one commit
/// of the other process wrote have all arrived.
@MainActor
private final class RemoteArrivals {
    private var observation: ChangeObservation?
    private var expected = 0, seen = 0, round = 0
    private var arrivedAt: UInt64?
    private var waiter: CheckedContinuation<UInt64?, Never>?
    private(set) var remoteChanges = 0, foreignChanges = 0

    init(_ main: MainContext) {
        observation = main.onChange { [weak self] change in self?.received(change) }
    }

    func cancel() { observation?.cancel() }

    func expect(_ rows: Int) {
        (expected, seen, arrivedAt, round) = (rows, 0, nil, round + 1)
    }

    private func received(_ change: ContextChange) {
        let now = HistoryProbe.monotonicNanoseconds()
        guard change.origin == .remote else {
            foreignChanges += 1
            return
        }
        remoteChanges += 1
        seen += change.inserted(Article.self).count + change.updated(Article.self).count
        guard seen >= expected, arrivedAt == nil else { return }
        arrivedAt = now
        waiter?.resume(returning: now)
        waiter = nil
    }

    /// When the expected rows arrived (``HistoryProbe/monotonicNanoseconds()``), or nil after `timeout`.
    func arrival(timeout: Duration) async -> UInt64? {
        if let arrivedAt { return arrivedAt }
        let round = round
        return await withCheckedContinuation { continuation in
            waiter = continuation
            Task { @MainActor in
                try? await Task.sleep(for: timeout)
                // A later commit's wait is not this one's to end.
                if self.round == round, let waiter = self.waiter {
                    self.waiter = nil
                    waiter.resume(returning: nil)
                }
            }
        }
    }
}
