import Foundation
import Strata

/// P4c: the notes shape — four entities, six workers importing at once, a live query open.
extension Benchmark {
    private static let latenessP99 = "timer lateness p99 ms"
    private static let diffDelayMax = "diff delay max ms"

    func notesScenario() async throws {
        let shape = NotesShape(data)
        let notesPerSave = shape.noteSaves[0][0].count, linksPerSave = shape.linkSaves[0][0].count
        var result = ScenarioResult(
            id: "P4c", title: "notes shape: 6 workers save \(shape.noteCount) notes + \(shape.linkCount) links, live query open",
            target: "longest job ≤ 8 ms; timer lateness p99 ≤ 8 ms; diffs ≤ 16 ms after their merge",
            [.absolute(8), .detail(Self.latenessP99, 8, unit: "ms"), .detail(Self.diffDelayMax, 16, unit: "ms")])
        var figures: [String: [Double]] = [:]
        for repetition in 0..<options.repetitions {
            let directory = try freshDirectory("p4c-\(repetition)")
            let samples = try await LatencyScenarios.notesImport(shape, directory: directory)
            let longest = samples.jobs.indices.max { samples.jobs[$0] < samples.jobs[$1] }
            result.add(.strata, longest.map { samples.jobs[$0] } ?? .nan)
            let repetitionFigures: [String: Double] = [
                "job p99 ms": percentile(samples.jobs, 0.99),
                "jobs": Double(samples.jobs.count),
                "change sets merged by the longest job": longest.map { Double(samples.jobChangeSets[$0]) } ?? .nan,
                Self.latenessP99: percentile(samples.lateness, 0.99),
                "timer lateness max ms": samples.lateness.max() ?? .nan,
                "main-queue timer lateness p99 ms": percentile(samples.mainQueueLateness, 0.99),
                "main-queue timer lateness max ms": samples.mainQueueLateness.max() ?? .nan,
                "diff delay p50 ms": percentile(samples.diffDelays, 0.5),
                Self.diffDelayMax: samples.diffDelays.max() ?? .nan,
                "diffs received": Double(samples.diffs),
                "diffs received after the last save returned": Double(samples.diffsAfterSaves),
                "values sizes seen by the timer": Double(samples.valueSteps),
                "saves ms (first to last returned)": samples.saving.milliseconds,
                "merged ms (first save to all merged and received)": samples.merged.milliseconds,
            ]
            for (name, value) in repetitionFigures { figures[name, default: []].append(value) }
            log("P4c repetition \(repetition + 1): \(samples.jobs.count) jobs, longest "
                + "\(String(format: "%.1f", result.samples[.strata]!.last!)) ms; timer lateness p99 "
                + "\(String(format: "%.1f", percentile(samples.lateness, 0.99))) ms, max "
                + "\(String(format: "%.1f", samples.lateness.max() ?? .nan)) ms (main queue's: max "
                + "\(String(format: "%.1f", samples.mainQueueLateness.max() ?? .nan)) ms); \(samples.diffs) diffs, delay p50 "
                + "\(String(format: "%.1f", percentile(samples.diffDelays, 0.5))) ms, max "
                + "\(String(format: "%.1f", samples.diffDelays.max() ?? .nan)) ms, \(samples.diffsAfterSaves) after the saves "
                + "returned; the timer saw \(samples.valueSteps) result sizes; saves "
                + "\(format(samples.saving)), all merged \(format(samples.merged))")
            try? FileManager.default.removeItem(atPath: directory)
        }
        for (name, values) in figures { result.details[name] = Statistics(values)?.median }
        result.notes.append("4 workers × 5 saves of \(notesPerSave) notes (title and body in full text), 2 × 4 saves of "
                            + "\(linksPerSave) note–tag links (.notKept); 20 notebooks and 200 tags resident; the live "
                            + "query shows one notebook's notes, newest first (\(shape.shownCount) at the end)")
        result.notes.append("jobs timed by MainContext.onMainActorWork; the timer is Task.sleep(1 ms) on the main actor "
                            + "(its wake-up waits for the global pool, then the main actor), the main-queue timer a 1 ms "
                            + "DispatchSource on the main queue (waits for the main thread only); a diff's delay runs from "
                            + "the main context's change observer seeing its merge (same main-actor job) to the diffs() "
                            + "consumer, a main-actor task, receiving it")
        record(result)
    }
}
