import Foundation
import Strata

extension DemoRunner {
    /// Relaunches per mode. One launch on a shared machine varies with what else the machine
    /// does; the demo reports the median of three, warm and cold taking turns, beside every
    /// run's time.
    static let relaunches = 3

    /// 6. The app is suspended: the main context is archived to a snapshot. Then the app is
    /// relaunched in fresh processes — warm from the snapshot and cold from SQLite, in turn, three
    /// times each — and every launch is checked against the state before suspension and against
    /// the others.
    func suspendAndRelaunch() async throws {
        heading(6, "Suspend: snapshot written; relaunch warm and cold in fresh processes, \(Self.relaunches) times each")
        let summary = try await main.writeSnapshot(to: options.paths.snapshot)
        say("   snapshot \(Format.bytes(summary.fileSize)) (\(Format.ratio(summary.compressionRatio)) compression), "
            + "\(Format.count(summary.header.objectCount, "object")), written in \(Format.duration(summary.duration))")
        report.snapshot = [("bytes", .int(summary.fileSize)), ("objects", .int(summary.header.objectCount)),
                           ("uncompressedBytes", .int(summary.header.uncompressedBytes)),
                           ("compressionRatio", .number((summary.compressionRatio * 100).rounded() / 100)),
                           ("generation", .int(summary.header.generation))]
        record(6, "snapshot written", summary.duration.seconds, [("bytes", .int(summary.fileSize))])
        let content = ContentDigest(main)
        let digest = content.digest
        report.checks.append(("live counts = full recount", counts.articles == content.articles
                              && counts.unread == content.unread && counts.starred == content.starred))
        counts.cancel()
        unreadList.cancel()
        try await store.close()

        var runs: [String: [(result: LaunchResult, wall: Duration)]] = [:]
        for _ in 0..<Self.relaunches {
            for mode in ["warm", "cold"] {
                let launched = try await Relauncher.launch(options.executable, [
                    "demo-launch", "--path", options.paths.store, "--snapshot", options.paths.snapshot, "--mode", mode,
                ] + (options.verbose ? ["--verbose"] : []))
                runs[mode, default: []].append(launched)
            }
        }
        var results: [String: LaunchResult] = [:]
        for mode in ["warm", "cold"] {
            let all = runs[mode] ?? []
            guard let (result, wall) = Self.median(all) else { continue }
            results[mode] = result
            let times = all.map(\.result.timeToDataSeconds)
            report.launches.append((mode, result, wall.seconds, times))
            report.steps.append(DemoReport.Step(number: 6, name: "\(mode) launch", seconds: result.timeToDataSeconds,
                                                feeds: result.feeds, articles: result.articles, unread: result.unread,
                                                starred: result.starred, details: [("processSeconds", .number(wall.seconds))]))
            say("   \(mode) start  first screen after \(Format.seconds(result.timeToFirstScreenSeconds).leftPadded(to: 8)), "
                + "\(Format.count(result.feeds + result.articles, "object")) after "
                + "\(Format.seconds(result.timeToDataSeconds).leftPadded(to: 8))  (median of "
                + times.map { Format.seconds($0) }.joined(separator: ", ") + "; \(result.outcome); "
                + "process \(Format.seconds(wall.seconds)))")
        }
        guard let warm = results["warm"], let cold = results["cold"] else { return }
        let warmRuns = runs["warm"]?.map(\.result) ?? [], coldRuns = runs["cold"]?.map(\.result) ?? []
        if warm.timeToFirstScreenSeconds > 0, warm.timeToDataSeconds > 0 {
            let screen = cold.timeToFirstScreenSeconds / warm.timeToFirstScreenSeconds
            let data = cold.timeToDataSeconds / warm.timeToDataSeconds
            say(screen >= 1.1 ? "   the warm start showed the first screen \(Format.ratio(screen)) sooner than the cold start, "
                + "every object \(Format.ratio(data)) sooner"
                : "   the warm start was no faster than the cold start here (\(Format.ratio(screen)))")
        }
        report.checks.append(("warm launch showed the first screen from the snapshot's first chunk",
                              warmRuns.allSatisfy { $0.firstScreenEarly && $0.firstScreenMatches } && coldRuns.allSatisfy(\.firstScreenMatches)))
        report.checks.append(("warm launch used the snapshot",
                              warmRuns.allSatisfy { $0.usedSnapshot && $0.outcome == SnapshotOutcome.used.description }))
        report.checks.append(("cold launch read SQLite", coldRuns.allSatisfy { !$0.usedSnapshot }))
        report.checks.append(("warm = cold = before suspension (digest \(digest))",
                              !warmRuns.isEmpty && !coldRuns.isEmpty && (warmRuns + coldRuns).allSatisfy { $0.digest == digest }))
        let check = try StoreInspector(path: options.paths.store).check(snapshot: options.paths.snapshot)
        report.checks.append(("store check: " + check.items.map(\.name).joined(separator: ", "), check.passed))
        let failed = check.items.filter { !$0.passed }
        say("   integrity: warm \(warmRuns.allSatisfy { $0.digest == digest } ? "=" : "≠") "
            + "cold \(coldRuns.allSatisfy { $0.digest == digest } ? "=" : "≠") "
            + "before suspension (digest \(digest)); store check "
            + (failed.isEmpty ? "passed (\(check.items.map(\.name).joined(separator: ", ")))"
               : "FAILED: " + failed.flatMap(\.problems).joined(separator: "; ")))
    }

    /// The launch whose time to data is the median of `runs`, with its time to the first screen
    /// replaced by the median of theirs (each median over every run); nil when there is none.
    static func median(_ runs: [(result: LaunchResult, wall: Duration)]) -> (LaunchResult, Duration)? {
        guard !runs.isEmpty else { return nil }
        var (result, wall) = runs.sorted { $0.result.timeToDataSeconds < $1.result.timeToDataSeconds }[runs.count / 2]
        result.timeToFirstScreenSeconds = runs.map(\.result.timeToFirstScreenSeconds).sorted()[runs.count / 2]
        return (result, wall)
    }
}
