import Foundation
import GRDB
import Strata

/// Runs every scenario for every peer on one deterministic data set and collects a ``Report``.
/// The scenarios are in `Benchmark+….swift`, one concern per file.
@MainActor
final class Benchmark {
    let options: Options
    let data: DataSet
    let articles: [Article]
    let records: [GRDBArticle]
    let handWrittenRecords: [GRDBHandWrittenArticle]
    /// The import in ten worker saves (P1, P3, P4, P4b).
    let batches: [[Article]]
    let root: String
    var report: Report

    /// The database file of each peer (`reference` excluded) that the read scenarios use: P1's
    /// last repetition, or an untimed import.
    var files: [Peer: String] = [:]
    var snapshotPath: String?
    var snapshotUncompressedBytes: Int?

    init(options: Options) throws {
        self.options = options
        let start = ContinuousClock.now
        let data = DataSet(count: options.articleCount)
        let articles = data.articles.map(Article.init)
        let batchSize = (options.articleCount + 9) / 10
        self.data = data
        self.articles = articles
        records = data.articles.map(GRDBArticle.init)
        handWrittenRecords = data.articles.map(GRDBHandWrittenArticle.init)
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

    func format(_ result: ScenarioResult, _ peer: Peer) -> String {
        result.samples[peer]?.last.map { format(.milliseconds($0)) } ?? "—"
    }

    func wants(_ id: String) -> Bool { options.only?.contains(id) ?? true }
    func wantsAny(_ ids: String...) -> Bool { ids.contains(where: wants) }

    /// A new, empty directory under the run's root.
    func freshDirectory(_ name: String) throws -> String {
        let path = root + "/" + name
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The file of `peer`, which the read scenarios need (set up by P1 or ``ensureFiles()``).
    func file(_ peer: Peer) throws -> String {
        guard let path = files[peer] else { throw BenchmarkError("no \(peer.label) file") }
        return path
    }

    func timed<T>(_ region: Region, _ body: () throws -> T) rethrows -> (T, Duration) {
        region.begin()
        let start = ContinuousClock.now
        let value = try body()
        let duration = ContinuousClock.now - start
        region.end()
        return (value, duration)
    }

    func timed<T>(_ region: Region, _ body: () async throws -> T) async rethrows -> (T, Duration) {
        region.begin()
        let start = ContinuousClock.now
        let value = try await body()
        let duration = ContinuousClock.now - start
        region.end()
        return (value, duration)
    }

    /// Times `body` as `peer`'s sample of `result` (its callgrind region is named after both) and
    /// returns what it returned.
    func measure<T>(_ result: inout ScenarioResult, _ peer: Peer, objects: Int, _ body: () throws -> T) rethrows -> T {
        let (value, duration) = try timed(Region(result.id, peer, objects: objects), body)
        result.add(peer, duration)
        return value
    }

    func measure<T>(_ result: inout ScenarioResult, _ peer: Peer, objects: Int,
                    _ body: () async throws -> T) async rethrows -> T {
        let (value, duration) = try await timed(Region(result.id, peer, objects: objects), body)
        result.add(peer, duration)
        return value
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
        if wants("P4b") { try await mainActorJobScenario() }
        if wants("P4c") { try await notesScenario() }
        if wantsAny("P5", "P5b", "P6", "P7", "P8", "P8b", "P9", "M1") {
            try await ensureFiles()
            try await coldStartQueryAndSnapshotScenarios()
        }
        // Before P7, whose "mark read" changes the peers' files that P5f reads as its reference.
        if wantsAny("P5f", "M1f") {
            try await ensureFiles()
            try await fullTextWarmStartScenarios()
        }
        if wantsAny("P5", "P5b", "P7", "M1") {
            let main = try await warmStartScenarios()
            if wants("M1") { try memoryScenario() }
            if wants("P7") { try await markReadScenario(main) }
            try await main.store.close()
        }
        if wants("P10") { try await fullTextScenario() }
        if wantsAny("H2", "H3", "H4") { try await historyScenarios() }
        report.scenarios.sort { order($0.id) < order($1.id) }
        return report
    }

    private func order(_ id: String) -> Int { Options.scenarios.firstIndex(of: id) ?? 99 }
}
