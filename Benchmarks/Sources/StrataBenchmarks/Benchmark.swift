import Foundation
import GRDB
import Strata

/// Command-line options.
struct Options: Sendable {
    var quick = false
    var json = false
    var articleCount = 100_000
    var repetitions = 3
    /// Scenario IDs to run (nil: all). Scenarios they depend on are set up untimed.
    var only: Set<String>?
    var directory: String?
    var keepFiles = false
    /// Also write the JSON report to this file (the table still goes to stdout).
    var jsonOutput: String?

    static let usage = """
        usage: StrataBenchmarks [--quick] [--json] [--size N] [--repetitions N] [--only P1,P5,...] [--dir PATH] [--keep]
          --quick        2,000 articles, 2 repetitions (CI: keeps the benchmarks from rotting)
          --json         print {"scenarios": [...]} on stdout instead of the table
          --size N       number of articles (default 100,000)
          --repetitions  repetitions per scenario (default 3)
          --only         run only these scenarios (IDs: P1 P2 P3 P4 P5 P5b P6 P7 P8 P9 M1)
          --dir PATH     where to put the database files (default: a fresh temporary directory)
          --keep         keep the files afterwards
          --json-out F   also write the JSON report to file F
        """

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        var size: Int?, repetitions: Int?
        while let argument = iterator.next() {
            switch argument {
            case "--quick": quick = true
            case "--json": json = true
            case "--size": size = iterator.next().flatMap(Int.init)
            case "--repetitions": repetitions = iterator.next().flatMap(Int.init)
            case "--only": only = Set((iterator.next() ?? "").split(separator: ",").map { String($0).uppercased().replacingOccurrences(of: "B", with: "b") })
            case "--dir": directory = iterator.next()
            case "--keep": keepFiles = true
            case "--json-out": jsonOutput = iterator.next()
            case "--help", "-h":
                print(Self.usage)
                exit(0)
            default: throw BenchmarkError("unknown argument \(argument)\n\(Self.usage)")
            }
        }
        articleCount = size ?? (quick ? 2_000 : 100_000)
        self.repetitions = max(1, repetitions ?? (quick ? 2 : 3))
        guard articleCount >= 100 else { throw BenchmarkError("--size must be at least 100") }
    }
}

/// Runs every scenario for every peer on one deterministic data set and collects a ``Report``.
@MainActor
final class Benchmark {
    let options: Options
    let data: DataSet
    let articles: [Article]
    let records: [GRDBArticle]
    /// The import in ten worker saves (P1, P3, P4).
    let batches: [[Article]]
    let root: String
    var report: Report

    // The files the read scenarios use: P1's last repetition (or an untimed import).
    private var rawPath: String?
    private var grdbPath: String?
    private var strataPath: String?
    private var snapshotPath: String?
    private var snapshotUncompressedBytes: Int?

    init(options: Options) throws {
        self.options = options
        let start = ContinuousClock.now
        let data = DataSet(count: options.articleCount)
        let articles = data.articles.map(Article.init)
        let batchSize = (options.articleCount + 9) / 10
        self.data = data
        self.articles = articles
        records = data.articles.map(GRDBArticle.init)
        batches = stride(from: 0, to: articles.count, by: batchSize).map { Array(articles[$0..<min(articles.count, $0 + batchSize)]) }
        root = options.directory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-benchmarks-\(ProcessInfo.processInfo.processIdentifier)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        report = Report(date: Date(), articleCount: options.articleCount, repetitions: options.repetitions,
                        quick: options.quick, sqliteVersion: RawDatabase.version,
                        cores: ProcessInfo.processInfo.activeProcessorCount)
        let elapsed = ContinuousClock.now - start
        log("generated \(articles.count) articles in \(format(elapsed)); files in \(root)")
    }

    func cleanUp() {
        if !options.keepFiles { try? FileManager.default.removeItem(atPath: root) }
    }

    // MARK: Helpers

    func log(_ message: String) {
        FileHandle.standardError.write(Data(("[bench] " + message + "\n").utf8))
    }

    func format(_ duration: Duration) -> String { String(format: "%.1f ms", duration.milliseconds) }

    func wants(_ id: String) -> Bool { options.only?.contains(id) ?? true }
    func wantsAny(_ ids: String...) -> Bool { ids.contains(where: wants) }

    /// A new, empty directory under the run's root.
    func freshDirectory(_ name: String) throws -> String {
        let path = root + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func timed<T>(_ body: () throws -> T) rethrows -> (T, Duration) {
        let start = ContinuousClock.now
        let value = try body()
        return (value, ContinuousClock.now - start)
    }

    func timed<T>(_ body: () async throws -> T) async rethrows -> (T, Duration) {
        let start = ContinuousClock.now
        let value = try await body()
        return (value, ContinuousClock.now - start)
    }

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw BenchmarkError("check failed: \(message())") }
    }

    func record(_ result: ScenarioResult) {
        report.scenarios.append(result)
        let strata = result.median(.strata).map { String(format: "%.2f", $0) } ?? "—"
        let ratios = result.ratios.map { String(format: "%@ %.2f×", $0.name, $0.value) }.joined(separator: ", ")
        log("\(result.id) done: Strata \(strata) \(result.unit)\(ratios.isEmpty ? "" : ", " + ratios) — "
            + (result.meetsTarget ? "meets" : "misses") + " \(result.targetText)")
    }

    // MARK: Run

    func run() async throws -> Report {
        if wants("P1") { try await importScenario() }
        if wants("P2") { try await workerSaveScenario() }
        if wants("P3") { try await saveToVisibleScenario() }
        if wants("P4") { try await readLatencyScenario() }
        if wantsAny("P5", "P5b", "P6", "P7", "P8", "P9", "M1") {
            try await ensureFiles()
            try await coldStartQueryAndSnapshotScenarios()
        }
        if wantsAny("P5", "P5b", "P7", "M1") {
            let main = try await warmStartScenarios()
            if wants("M1") { try memoryScenario() }
            if wants("P7") { try await markReadScenario(main) }
            try await main.store.close()
        }
        report.scenarios.sort { order($0.id) < order($1.id) }
        return report
    }

    private func order(_ id: String) -> Int {
        ["P1", "P2", "P3", "P4", "P5", "P5b", "P6", "P7", "P8", "P9", "M1"].firstIndex(of: id) ?? 99
    }

    // MARK: P1 — import

    private func importScenario() async throws {
        var result = ScenarioResult(id: "P1", title: "import \(articles.count) via 10 worker saves, until persisted",
                                    target: "≤ 1.5× raw; ≤ 0.5× GRDB record.insert", [.ratio(.raw, 1.5), .ratio(.grdb, 0.5)])
        for repetition in 0..<options.repetitions {
            let rawDirectory = try freshDirectory("p1-raw-\(repetition)")
            do {
                let database = try RawDatabase(path: rawDirectory + "/raw.sqlite")
                try database.execute(RawDatabase.schemaSQL())
                let ((), duration) = try timed { try database.insertAll(data.articles) }
                result.add(.raw, duration)
                try expect(try database.count("SELECT count(*) FROM articles") == articles.count, "raw import count")
            }

            let grdbDirectory = try freshDirectory("p1-grdb-\(repetition)")
            do {
                let pool = try GRDBPeer.open(grdbDirectory + "/grdb.sqlite", create: true)
                let ((), duration) = try timed { try GRDBPeer.insertAll(records, into: pool) }
                result.add(.grdb, duration)
                try expect(try GRDBPeer.count(pool) == articles.count, "GRDB import count")
            }

            let strataDirectory = try freshDirectory("p1-strata-\(repetition)")
            do {
                let store = try await StrataPeer.open(strataDirectory + "/strata.sqlite")
                let ((), duration) = try await timed { try await StrataPeer.importThroughWorker(batches, into: store) }
                result.add(.strata, duration)
                try expect(try await store.count(Query<Article>()) == articles.count, "Strata import count")
                try await store.close()
            }
            log("P1 repetition \(repetition + 1): raw \(format(.milliseconds(result.samples[.raw]!.last!))), "
                + "GRDB \(format(.milliseconds(result.samples[.grdb]!.last!))), Strata \(format(.milliseconds(result.samples[.strata]!.last!)))")
            // Keep the last repetition's files for the read scenarios; drop the others.
            if let rawPath { try? FileManager.default.removeItem(atPath: (rawPath as NSString).deletingLastPathComponent) }
            if let grdbPath { try? FileManager.default.removeItem(atPath: (grdbPath as NSString).deletingLastPathComponent) }
            if let strataPath { try? FileManager.default.removeItem(atPath: (strataPath as NSString).deletingLastPathComponent) }
            rawPath = rawDirectory + "/raw.sqlite"
            grdbPath = grdbDirectory + "/grdb.sqlite"
            strataPath = strataDirectory + "/strata.sqlite"
        }
        result.notes.append("no main context open (its merges are P3/P4's subject)")
        record(result)
    }

    /// The three data files, made untimed when P1 did not run.
    private func ensureFiles() async throws {
        guard rawPath == nil else { return }
        log("setting up the data files (untimed)")
        let rawDirectory = try freshDirectory("data-raw")
        let database = try RawDatabase(path: rawDirectory + "/raw.sqlite")
        try database.execute(RawDatabase.schemaSQL())
        try database.insertAll(data.articles)
        rawPath = rawDirectory + "/raw.sqlite"
        let grdbDirectory = try freshDirectory("data-grdb")
        try GRDBPeer.insertAll(records, into: try GRDBPeer.open(grdbDirectory + "/grdb.sqlite", create: true))
        grdbPath = grdbDirectory + "/grdb.sqlite"
        let strataDirectory = try freshDirectory("data-strata")
        let store = try await StrataPeer.open(strataDirectory + "/strata.sqlite")
        try await StrataPeer.importThroughWorker(batches, into: store)
        try await store.close()
        strataPath = strataDirectory + "/strata.sqlite"
    }

    // MARK: P2 — worker save

    private func workerSaveScenario() async throws {
        let batch = batches[0]
        let grdbBatch = Array(records[0..<batch.count])
        var result = ScenarioResult(id: "P2", title: "worker save() of \(batch.count) changes returns",
                                    target: "≤ 0.1× GRDB writing the same", [.ratio(.grdb, 0.1)])
        var persistTimes: [Double] = []
        for repetition in 0..<options.repetitions {
            let grdbDirectory = try freshDirectory("p2-grdb-\(repetition)")
            do {
                let pool = try GRDBPeer.open(grdbDirectory + "/grdb.sqlite", create: true)
                let ((), duration) = try timed { try GRDBPeer.insertAll(grdbBatch, into: pool) }
                result.add(.grdb, duration)
            }
            let strataDirectory = try freshDirectory("p2-strata-\(repetition)")
            let store = try await StrataPeer.open(strataDirectory + "/strata.sqlite")
            let start = ContinuousClock.now
            result.add(.strata, try await StrataPeer.timeWorkerSave(batch, into: store))
            try await store.persist()
            persistTimes.append((ContinuousClock.now - start).milliseconds)
            try expect(try await store.count(Query<Article>()) == batch.count, "Strata P2 count")
            try await store.close()
            try? FileManager.default.removeItem(atPath: grdbDirectory)
            try? FileManager.default.removeItem(atPath: strataDirectory)
        }
        result.details["strata insert+save+persist ms"] = Statistics(persistTimes)?.median
        record(result)
    }

    // MARK: P3, P4 — latencies while an import persists

    private var minimumLatencySamples: Int { options.quick ? 20 : 200 }

    private func saveToVisibleScenario() async throws {
        var result = ScenarioResult(id: "P3", title: "worker save of 100 → visible on main, p99, during import",
                                    target: "p99 ≤ 5 ms", [.absolute(5)])
        var p50: [Double] = [], counts: [Double] = [], imports: [Double] = [], maxima: [Double] = []
        for repetition in 0..<options.repetitions {
            let directory = try freshDirectory("p3-\(repetition)")
            let samples = try await LatencyScenarios.saveToVisible(batches, directory: directory,
                                                                   minimumSamples: minimumLatencySamples)
            result.add(.strata, percentile(samples.values, 0.99))
            p50.append(percentile(samples.values, 0.5))
            maxima.append(samples.values.max() ?? .nan)
            counts.append(Double(samples.values.count))
            imports.append(samples.importDuration.milliseconds)
            log("P3 repetition \(repetition + 1): \(samples.values.count) probes (\(samples.samplesAfterImport) after the "
                + "import), p50 \(String(format: "%.2f", p50.last!)) ms, p99 \(String(format: "%.2f", result.samples[.strata]!.last!)) ms")
            try? FileManager.default.removeItem(atPath: directory)
        }
        result.details["p50 ms"] = Statistics(p50)?.median
        result.details["max ms"] = Statistics(maxima)?.median
        result.details["samples"] = Statistics(counts)?.median
        result.details["import ms"] = Statistics(imports)?.median
        record(result)
    }

    private func readLatencyScenario() async throws {
        var result = ScenarioResult(id: "P4", title: "main-context read (unread of feed, newest 50), p99, during import",
                                    target: "p99 ≤ 1 ms", [.absolute(1)])
        var p50: [Double] = [], stalls: [Double] = [], stallMax: [Double] = [], counts: [Double] = []
        for repetition in 0..<options.repetitions {
            let directory = try freshDirectory("p4-\(repetition)")
            let samples = try await LatencyScenarios.readLatency(batches, directory: directory,
                                                                 minimumSamples: minimumLatencySamples)
            result.add(.strata, percentile(samples.values, 0.99))
            p50.append(percentile(samples.values, 0.5))
            stalls.append(percentile(samples.mainActorStalls, 0.99))
            stallMax.append(samples.mainActorStalls.max() ?? .nan)
            counts.append(Double(samples.values.count))
            log("P4 repetition \(repetition + 1): \(samples.values.count) reads, p50 \(String(format: "%.3f", p50.last!)) ms, "
                + "p99 \(String(format: "%.3f", result.samples[.strata]!.last!)) ms, main-actor stall p99 "
                + "\(String(format: "%.1f", stalls.last!)) ms")
            try? FileManager.default.removeItem(atPath: directory)
        }
        result.details["p50 ms"] = Statistics(p50)?.median
        result.details["main-actor stall p99 ms"] = Statistics(stalls)?.median
        result.details["main-actor stall max ms"] = Statistics(stallMax)?.median
        result.details["samples"] = Statistics(counts)?.median
        record(result)
    }

    // MARK: P6, P8, P9 — cold start, queries, snapshot write

    private func coldStartQueryAndSnapshotScenarios() async throws {
        guard let rawPath, let grdbPath, let strataPath else { return }
        var cold = ScenarioResult(id: "P6", title: "cold start: open + main context filled from SQLite",
                                  target: "≤ 1.3× raw fetch-all", [.ratio(.raw, 1.3)])
        var kept: (Store, MainContext)?
        let coldRepetitions = wants("P6") ? options.repetitions : 1
        for repetition in 0..<coldRepetitions {
            if let (store, _) = kept {
                try await store.close()
                kept = nil
            }
            let (rows, rawDuration) = try timed { try RawDatabase(path: rawPath).fetchAll() }
            cold.add(.raw, rawDuration)
            try expect(rows.count == articles.count && rows == data.articles, "raw fetch-all returns the data set")
            let (records, grdbDuration) = try timed { try GRDBPeer.openAndFetchAll(grdbPath) }
            cold.add(.grdb, grdbDuration)
            try expect(records.count == articles.count, "GRDB fetch-all count")
            let ((store, main), strataDuration) = try await timed { () async throws -> (Store, MainContext) in
                let store = try await StrataPeer.open(strataPath)
                let main = store.mainContext
                try await main.loadResidentEntities()
                return (store, main)
            }
            cold.add(.strata, strataDuration)
            try expect(main.registeredCount(Article.self) == articles.count, "Strata cold start holds every article")
            kept = (store, main)
            log("P6 repetition \(repetition + 1): raw \(format(rawDuration)), GRDB \(format(grdbDuration)), Strata \(format(strataDuration))")
        }
        guard let (store, main) = kept else { return }
        if wants("P6") { record(cold) }
        if wants("P8") { try queryScenario(main, rawPath: rawPath, grdbPath: grdbPath) }
        try await snapshotWriteScenario(main, rawPath: rawPath)
        try await store.close()
    }

    private func queryScenario(_ main: MainContext, rawPath: String, grdbPath: String) throws {
        var result = ScenarioResult(id: "P8", title: "\"unread of feed F\" × \(DataSet.feeds) feeds",
                                    target: "≤ 0.1× GRDB's query", [.ratio(.grdb, 0.1)])
        let feeds = Array(0..<DataSet.feeds)
        let raw = try RawDatabase(path: rawPath)
        let pool = try GRDBPeer.open(grdbPath, create: false)
        let expected = data.articles.filter { !$0.isRead }.count
        for _ in 0..<options.repetitions {
            let (rawCount, rawDuration) = try timed { try raw.unreadOfFeeds(feeds) }
            result.add(.raw, rawDuration)
            let (grdbCount, grdbDuration) = try timed { try GRDBPeer.unreadOfFeeds(feeds, in: pool) }
            result.add(.grdb, grdbDuration)
            let (strataCount, strataDuration) = try timed { () throws -> Int in
                var total = 0
                for feed in feeds { total += try main.objects(matching: StrataPeer.unreadQuery(feed: feed)).count }
                return total
            }
            result.add(.strata, strataDuration)
            try expect(rawCount == expected && grdbCount == expected && strataCount == expected,
                       "P8 counts: raw \(rawCount), GRDB \(grdbCount), Strata \(strataCount), expected \(expected)")
        }
        result.notes.append("\(expected) rows in all")
        record(result)
    }

    private func snapshotWriteScenario(_ main: MainContext, rawPath: String) async throws {
        var result = ScenarioResult(id: "P9", title: "write the snapshot (encode, LZ4, fsync, rename)",
                                    target: "≤ 1.5× hand-rolled", [.ratio(.raw, 1.5)])
        let directory = try freshDirectory("snapshot")
        let path = directory + "/articles.snapshot"
        let rows = try RawDatabase(path: rawPath).fetchAll()
        var handRolled: HandRolledSnapshot.Written?
        var summary: SnapshotSummary?
        let repetitions = wants("P9") ? options.repetitions : 1
        for _ in 0..<repetitions {
            let (written, rawDuration) = try timed { try HandRolledSnapshot.write(rows, to: directory + "/hand-rolled.bin") }
            result.add(.raw, rawDuration)
            handRolled = written
            let (strataSummary, strataDuration) = try await timed { try await main.writeSnapshot(to: path) }
            result.add(.strata, strataDuration)
            summary = strataSummary
        }
        guard let summary, let handRolled else { return }
        snapshotPath = path
        snapshotUncompressedBytes = summary.header.uncompressedBytes
        try expect(summary.header.objectCount == articles.count, "the snapshot holds every article")
        let mib = 1024.0 * 1024.0
        result.details["strata uncompressed MiB"] = Double(summary.header.uncompressedBytes) / mib
        result.details["strata file MiB"] = Double(summary.fileSize) / mib
        result.details["hand-rolled uncompressed MiB"] = Double(handRolled.uncompressedBytes) / mib
        result.details["hand-rolled file MiB"] = Double(handRolled.compressedBytes) / mib
        result.notes.append("the raw column is the hand-rolled writer (single-threaded; Strata compresses chunks on every core)")
        if wants("P9") { record(result) }
    }

    // MARK: P5, P5b — warm start

    /// Runs the warm starts and returns the last one's main context (for M1 and P7).
    private func warmStartScenarios() async throws -> MainContext {
        guard let rawPath, let grdbPath, let strataPath, let snapshotPath else { throw BenchmarkError("no snapshot") }
        var warm = ScenarioResult(id: "P5", title: "warm start: open + main context filled from the snapshot",
                                  target: "≤ 0.6× raw; ≤ 0.2× GRDB fetchAll", [.ratio(.raw, 0.6), .ratio(.grdb, 0.2)])
        var firstPage = ScenarioResult(id: "P5b", title: "warm start → first 50 \"unread, newest first\" on main",
                                       target: "≤ 0.05× raw fetch-all", [.ratio(.raw, 0.05)])
        var rawFirstPage: [Double] = []
        var kept: WarmStart?
        var outcomes: Set<String> = []
        for repetition in 0..<options.repetitions {
            if let previous = kept {
                try await previous.store.close()
                kept = nil
            }
            let (_, rawDuration) = try timed { try RawDatabase(path: rawPath).fetchAll() }
            warm.add(.raw, rawDuration)
            firstPage.add(.raw, rawDuration)
            let (_, grdbDuration) = try timed { try GRDBPeer.openAndFetchAll(grdbPath) }
            warm.add(.grdb, grdbDuration)
            let (_, rawQuery) = try timed { () throws -> Int in
                let database = try RawDatabase(path: rawPath)
                return try database.count("SELECT count(*) FROM (SELECT * FROM articles WHERE isRead = 0 "
                                          + "ORDER BY published DESC LIMIT 50)")
            }
            rawFirstPage.append(rawQuery.milliseconds)

            let start = ContinuousClock.now
            let opened = try await StrataPeer.openWarm(strataPath, snapshot: snapshotPath)
            let filled = ContinuousClock.now
            let page = try opened.mainContext.objects(matching: StrataPeer.unreadQuery(newest: true))
            let readable = ContinuousClock.now
            warm.add(.strata, filled - start)
            firstPage.add(.strata, readable - start)
            outcomes.insert("\(opened.outcome)")
            try expect(page.count == 50, "P5b reads 50 articles")
            try expect(opened.mainContext.registeredCount(Article.self) == articles.count, "warm start holds every article")
            kept = opened
            log("P5 repetition \(repetition + 1): raw \(format(rawDuration)), GRDB \(format(grdbDuration)), Strata "
                + "\(format(filled - start)) (\(opened.outcome)), first page \(format(readable - start))")
        }
        warm.notes.append("snapshot outcome: " + outcomes.sorted().joined(separator: ", "))
        firstPage.details["raw open + first-50 SQL query ms"] = Statistics(rawFirstPage)?.median
        firstPage.notes.append("openWarm fills the whole context before the first query can run")
        if wants("P5") { record(warm) }
        if wants("P5b") { record(firstPage) }
        guard let kept else { throw BenchmarkError("no warm start") }
        return kept.mainContext
    }

    // MARK: M1 — memory

    private func memoryScenario() throws {
        guard let strataPath, let snapshotPath, let snapshotUncompressedBytes else { return }
        let mib = 1024.0 * 1024.0
        var result = ScenarioResult(id: "M1", title: "peak RSS of a process holding \(articles.count) resident articles",
                                    unit: "MiB", target: "≤ 2.5× uncompressed snapshot", [.ratio(.reference, 2.5)])
        var warmPeaks: [Double] = [], coldPeaks: [Double] = [], baselines: [Double] = [], resident: [Double] = []
        for repetition in 0..<options.repetitions {
            let warm = try MemoryProbe.measure(mode: "warm", database: strataPath, snapshot: snapshotPath)
            let cold = try MemoryProbe.measure(mode: "cold", database: strataPath, snapshot: snapshotPath)
            try expect(warm.objects == articles.count && cold.objects == articles.count, "the memory child holds every article")
            warmPeaks.append(Double(warm.peakBytes) / mib)
            coldPeaks.append(Double(cold.peakBytes) / mib)
            baselines.append(Double(cold.baselinePeakBytes) / mib)
            resident.append(Double(max(warm.residentBytes, cold.residentBytes)) / mib)
            // The figure is the worse of the two ways a process comes to hold the articles.
            result.add(.strata, max(warmPeaks.last!, coldPeaks.last!))
            result.add(.reference, Double(snapshotUncompressedBytes) / mib)
            log("M1 repetition \(repetition + 1): peak warm \(String(format: "%.1f", warmPeaks.last!)) MiB (\(warm.outcome)), "
                + "cold \(String(format: "%.1f", coldPeaks.last!)) MiB, baseline \(String(format: "%.1f", baselines.last!)) MiB")
        }
        result.details["warm-start peak MiB"] = Statistics(warmPeaks)?.median
        result.details["cold-start peak MiB"] = Statistics(coldPeaks)?.median
        result.details["process baseline MiB"] = Statistics(baselines)?.median
        result.details["resident after load MiB"] = Statistics(resident)?.median
        result.notes.append("the reference column is the snapshot's uncompressed payload; the figure is max(warm, cold) VmHWM")
        record(result)
    }

    // MARK: P7 — mark read

    private func markReadScenario(_ main: MainContext) async throws {
        guard let rawPath, let grdbPath else { return }
        let unread = data.unreadIDs()
        // Every repetition marks a disjoint slice of unread articles, so each really changes rows.
        let count = min(10_000, articles.count / 10, unread.count / options.repetitions)
        var result = ScenarioResult(id: "P7", title: "mark \(count) IDs read: committed + main patched + change out",
                                    target: "≤ 1.2× raw UPDATE…IN; ≤ 0.25× GRDB load-modify-save",
                                    [.ratio(.raw, 1.2), .ratio(.grdb, 0.25)])
        let raw = try RawDatabase(path: rawPath)
        let pool = try GRDBPeer.open(grdbPath, create: false)
        var delivered = 0
        let observation = main.onChange { change in delivered += change.updated(Article.self).count }
        defer { observation.cancel() }
        let initiallyRead = articles.count - unread.count
        for repetition in 0..<options.repetitions {
            let ids = Array(unread[(repetition * count)..<((repetition + 1) * count)])
            let ((), rawDuration) = try timed { try raw.markRead(ids) }
            result.add(.raw, rawDuration)
            let ((), grdbDuration) = try timed { try GRDBPeer.markRead(ids, in: pool) }
            result.add(.grdb, grdbDuration)
            delivered = 0
            let ((), strataDuration) = try await timed {
                let submission = try main.updateAll(Article.self, ids: ids, set: ["isRead": true])
                try await submission.committed()
            }
            result.add(.strata, strataDuration)
            try expect(delivered == count, "the change set names \(count) updated articles (got \(delivered))")
            try expect(main.object(Article.self, id: ids[0])?.isRead == true, "the main context is patched")
            let expectedRead = initiallyRead + (repetition + 1) * count
            try expect(try raw.count("SELECT count(*) FROM articles WHERE isRead = 1") == expectedRead, "raw P7 count")
            try expect(try GRDBPeer.count(pool, where: "isRead = 1") == expectedRead, "GRDB P7 count")
            try expect(try await main.store.count(Query<Article>(where: Attribute("isRead") == true)) == expectedRead,
                       "Strata P7 count")
            log("P7 repetition \(repetition + 1): raw \(format(rawDuration)), GRDB \(format(grdbDuration)), Strata \(format(strataDuration))")
        }
        record(result)
    }
}
