import Foundation
import Strata

/// M1: the peak memory of a process that holds every article in its main context, measured in a
/// child process (this executable, in a hidden mode) so that the benchmark's own data does not
/// count. The child reports `VmHWM` (peak resident set) from /proc/self/status.
enum MemoryProbe {
    static let childFlag = "--memory-child"
    /// Appended to the mode (`warm-search`, `cold-search`): the store holds `SearchArticle`s (M1f).
    static let searchSuffix = "-search"

    struct Reading: Codable, Sendable {
        /// Peak RSS before opening the store: the Swift runtime, Foundation, the libraries.
        let baselinePeakBytes: Int
        /// Peak RSS after the main context holds every article.
        let peakBytes: Int
        /// RSS at that moment.
        let residentBytes: Int
        let objects: Int
        let outcome: String
    }

    /// Reads a `kB` field of /proc/self/status, in bytes (nil where there is no procfs).
    static func status(_ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            let number = line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first
            return number.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }

    /// The child: `--memory-child cold|warm[-search] <database> <snapshot>`; prints one JSON line.
    @MainActor
    static func runChild(_ arguments: [String]) async throws {
        guard arguments.count == 3 else {
            throw BenchmarkError("usage: \(childFlag) cold|warm|cold\(searchSuffix)|warm\(searchSuffix) <database> <snapshot>")
        }
        let search = arguments[0].hasSuffix(searchSuffix)
        let baseline = status("VmHWM") ?? 0
        let store: Store
        let main: MainContext
        let outcome: String
        if arguments[0].hasPrefix("warm") {
            let warm = try await search ? StrataPeer.openSearchWarm(arguments[1], snapshot: arguments[2])
                : StrataPeer.openWarm(arguments[1], snapshot: arguments[2])
            (store, main, outcome) = (warm.store, warm.mainContext, "\(warm.outcome)")
        } else {
            store = try await search ? StrataPeer.openSearch(arguments[1]) : StrataPeer.open(arguments[1])
            main = store.mainContext
            try await main.loadResidentEntities()
            outcome = "cold"
        }
        let objects = search ? main.registeredCount(SearchArticle.self) : main.registeredCount(Article.self)
        let reading = Reading(baselinePeakBytes: baseline, peakBytes: status("VmHWM") ?? 0,
                              residentBytes: status("VmRSS") ?? 0, objects: objects, outcome: outcome)
        print(String(decoding: try JSONEncoder().encode(reading), as: UTF8.self))
        withExtendedLifetime((store, main)) {}
    }

    /// Runs a child and returns what it measured.
    static func measure(mode: String, database: String, snapshot: String) throws -> Reading {
        try ChildProcess.run([childFlag, mode, database, snapshot], what: "the memory child (\(mode))")
    }
}

/// M1 and M1f, measured through ``MemoryProbe`` children.
extension Benchmark {
    func memoryScenario() throws {
        guard let snapshotPath, let snapshotUncompressedBytes else { return }
        try memoryScenario(id: "M1", title: "peak RSS of a process holding \(articles.count) resident articles", mode: "",
                           database: try file(.strata), snapshot: snapshotPath, snapshotUncompressedBytes: snapshotUncompressedBytes)
    }

    /// One memory scenario: the children open `database` warm from `snapshot` and cold, in the
    /// modes `warm` and `cold` followed by `mode` (``MemoryProbe/searchSuffix`` or nothing).
    func memoryScenario(id: String, title: String, mode: String, database strataPath: String, snapshot snapshotPath: String,
                        snapshotUncompressedBytes: Int) throws {
        let mib = 1024.0 * 1024.0
        var result = ScenarioResult(id: id, title: title,
                                    unit: "MiB", target: "≤ 2.5× uncompressed snapshot", [.ratio(.reference, 2.5)])
        var warmPeaks: [Double] = [], coldPeaks: [Double] = [], baselines: [Double] = [], resident: [Double] = []
        for repetition in 0..<options.repetitions {
            let warm = try MemoryProbe.measure(mode: "warm" + mode, database: strataPath, snapshot: snapshotPath)
            let cold = try MemoryProbe.measure(mode: "cold" + mode, database: strataPath, snapshot: snapshotPath)
            try expect(warm.objects == articles.count && cold.objects == articles.count, "\(id): the memory child holds every article")
            warmPeaks.append(Double(warm.peakBytes) / mib)
            coldPeaks.append(Double(cold.peakBytes) / mib)
            baselines.append(Double(cold.baselinePeakBytes) / mib)
            resident.append(Double(max(warm.residentBytes, cold.residentBytes)) / mib)
            // The figure is the worse of the two ways a process comes to hold the articles.
            result.add(.strata, max(warmPeaks.last!, coldPeaks.last!))
            result.add(.reference, Double(snapshotUncompressedBytes) / mib)
            log("\(id) repetition \(repetition + 1): peak warm \(String(format: "%.1f", warmPeaks.last!)) MiB (\(warm.outcome)), "
                + "cold \(String(format: "%.1f", coldPeaks.last!)) MiB, baseline \(String(format: "%.1f", baselines.last!)) MiB")
        }
        result.details["warm-start peak MiB"] = Statistics(warmPeaks)?.median
        result.details["cold-start peak MiB"] = Statistics(coldPeaks)?.median
        result.details["process baseline MiB"] = Statistics(baselines)?.median
        result.details["resident after load MiB"] = Statistics(resident)?.median
        result.notes.append("the reference column is the snapshot's uncompressed payload; the figure is max(warm, cold) VmHWM")
        record(result)
    }
}
