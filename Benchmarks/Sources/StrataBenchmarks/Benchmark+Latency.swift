import Foundation
import Strata

/// P3, P4 and P4b: latencies on the main actor while a worker imports and the root persists.
extension Benchmark {
    private var minimumLatencySamples: Int { options.quick ? 20 : 200 }

    // MARK: P3 — save → visible

    func saveToVisibleScenario() async throws {
        var result = ScenarioResult(id: "P3", title: "worker save of 100 → visible on main, p99, during import",
                                    target: "p99 ≤ 5 ms", [.absolute(5)])
        var p50: [Double] = [], counts: [Double] = [], imports: [Double] = [], maxima: [Double] = [], bound: [Double] = []
        var importMedian: [Double] = [], importMax: [Double] = [], unqueued: [Double] = [], unqueuedCount: [Double] = []
        for repetition in 0..<options.repetitions {
            let directory = try freshDirectory("p3-\(repetition)")
            let samples = try await LatencyScenarios.saveToVisible(batches, directory: directory,
                                                                   minimumSamples: minimumLatencySamples)
            result.add(.strata, percentile(samples.values, 0.99))
            p50.append(percentile(samples.values, 0.5))
            maxima.append(samples.values.max() ?? .nan)
            counts.append(Double(samples.values.count))
            imports.append(samples.importDuration.milliseconds)
            importMedian.append(percentile(samples.importSaveToVisible, 0.5))
            importMax.append(samples.importSaveToVisible.max() ?? .nan)
            unqueued.append(percentile(samples.valuesNotBehindImport, 0.99))
            unqueuedCount.append(Double(samples.valuesNotBehindImport.count))
            log("P3 repetition \(repetition + 1): a 10,000-object import save → visible: median "
                + "\(String(format: "%.1f", importMedian.last!)) ms, max \(String(format: "%.1f", importMax.last!)) ms; "
                + "p99 of the \(samples.valuesNotBehindImport.count) probes saved while none was on its way "
                + "\(String(format: "%.2f", unqueued.last!)) ms")
            log("P3 repetition \(repetition + 1): \(samples.values.count) probes (\(samples.samplesAfterImport) after the "
                + "import), p50 \(String(format: "%.2f", p50.last!)) ms, p99 \(String(format: "%.2f", result.samples[.strata]!.last!)) ms")
            try? FileManager.default.removeItem(atPath: directory)
            let bare = try freshDirectory("p3-bare-\(repetition)")
            let lateness = try await LatencyScenarios.latenessWithoutMainContext(batches, directory: bare, minimumSamples: minimumLatencySamples)
            bound.append(percentile(lateness, 0.99))
            log("P3 repetition \(repetition + 1): main-actor timer lateness during the import with no main context, p99 \(String(format: "%.2f", bound.last!)) ms over \(lateness.count)")
            try? FileManager.default.removeItem(atPath: bare)
        }
        result.details["p50 ms"] = Statistics(p50)?.median
        result.details["timer lateness p99 ms, no main context"] = Statistics(bound)?.median
        result.details["10k import save → visible median ms"] = Statistics(importMedian)?.median
        result.details["10k import save → visible max ms"] = Statistics(importMax)?.median
        result.details["p99 ms of probes not queued behind an import save"] = Statistics(unqueued)?.median
        result.details["probes not queued behind an import save"] = Statistics(unqueuedCount)?.median
        result.details["max ms"] = Statistics(maxima)?.median
        result.details["samples"] = Statistics(counts)?.median
        result.details["import ms"] = Statistics(imports)?.median
        record(result)
    }

    // MARK: P4 — read latency

    func readLatencyScenario() async throws {
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

    // MARK: P4b — Strata's longest main-actor job

    func mainActorJobScenario() async throws {
        let ids = Array(data.unreadIDs().prefix(min(10_000, articles.count / 10)))
        var result = ScenarioResult(id: "P4b", title: "Strata's longest main-actor job: import, then a \(ids.count)-ID updateAll",
                                    target: "≤ 8 ms (one 120 Hz frame)", [.absolute(8)])
        var figures: [String: [Double]] = [:]
        for repetition in 0..<options.repetitions {
            let directory = try freshDirectory("p4b-\(repetition)")
            let samples = try await LatencyScenarios.mainActorJobs(batches, markRead: ids, directory: directory)
            let jobs = samples.importJobs + samples.updateJobs
            let lateness = samples.importLateness + samples.updateLateness
            result.add(.strata, jobs.max() ?? .nan)
            let repetitionFigures = [
                "job p99 ms": percentile(jobs, 0.99),
                "jobs": Double(jobs.count),
                "longest import job ms": samples.importJobs.max() ?? .nan,
                "longest updateAll job ms": samples.updateJobs.max() ?? .nan,
                "updateAll call ms": samples.updateCall.milliseconds,
                "timer lateness p99 ms": percentile(lateness, 0.99),
                "timer lateness max ms": lateness.max() ?? .nan,
                "timer lateness max during updateAll ms": samples.updateLateness.max() ?? .nan,
            ]
            for (name, value) in repetitionFigures { figures[name, default: []].append(value) }
            log("P4b repetition \(repetition + 1): \(jobs.count) jobs, longest \(String(format: "%.1f", jobs.max() ?? .nan)) ms "
                + "(import \(String(format: "%.1f", samples.importJobs.max() ?? .nan)) ms, updateAll "
                + "\(String(format: "%.1f", samples.updateJobs.max() ?? .nan)) ms); timer lateness p99 "
                + "\(String(format: "%.1f", percentile(lateness, 0.99))) ms, max \(String(format: "%.1f", lateness.max() ?? .nan)) ms")
            try? FileManager.default.removeItem(atPath: directory)
        }
        for (name, values) in figures { result.details[name] = Statistics(values)?.median }
        result.notes.append("jobs timed by MainContext.onMainActorWork (Strata's merges, app handlers excluded); "
                            + "the timer lateness is any main-actor work plus scheduling")
        record(result)
    }
}
