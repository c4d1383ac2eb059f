import Foundation
import Strata

extension DemoRunner {
    /// 6. The app is suspended: the main context is archived to a snapshot. Then the app is
    /// relaunched twice in fresh processes — warm from the snapshot, cold from SQLite — and both
    /// are checked against the state before suspension and against each other.
    func suspendAndRelaunch() async throws {
        heading(6, "Suspend: snapshot written; relaunch twice in fresh processes")
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

        var results: [String: LaunchResult] = [:]
        for mode in ["warm", "cold"] {
            let (result, wall) = try await Relauncher.launch(options.executable, [
                "demo-launch", "--path", options.paths.store, "--snapshot", options.paths.snapshot, "--mode", mode,
            ] + (options.verbose ? ["--verbose"] : []))
            results[mode] = result
            report.launches.append((mode, result, wall.seconds))
            report.steps.append(DemoReport.Step(number: 6, name: "\(mode) launch", seconds: result.timeToDataSeconds,
                                                feeds: result.feeds, articles: result.articles, unread: result.unread,
                                                starred: result.starred, details: [("processSeconds", .number(wall.seconds))]))
            say("   \(mode) start  first screen after \(Format.seconds(result.timeToFirstScreenSeconds).leftPadded(to: 8)), "
                + "\(Format.count(result.feeds + result.articles, "object")) after "
                + "\(Format.seconds(result.timeToDataSeconds).leftPadded(to: 8))  (\(result.outcome); "
                + "process \(Format.seconds(wall.seconds)))")
        }
        guard let warm = results["warm"], let cold = results["cold"] else { return }
        if warm.timeToFirstScreenSeconds > 0, warm.timeToDataSeconds > 0 {
            let screen = cold.timeToFirstScreenSeconds / warm.timeToFirstScreenSeconds
            let data = cold.timeToDataSeconds / warm.timeToDataSeconds
            say(screen >= 1.1 ? "   the warm start showed the first screen \(Format.ratio(screen)) sooner than the cold start, "
                + "every object \(Format.ratio(data)) sooner"
                : "   the warm start was no faster than the cold start here (\(Format.ratio(screen)))")
        }
        report.checks.append(("warm launch showed the first screen from the snapshot's first chunk",
                              warm.firstScreenEarly && warm.firstScreenMatches && cold.firstScreenMatches))
        report.checks.append(("warm launch used the snapshot", warm.usedSnapshot && warm.outcome == SnapshotOutcome.used.description))
        report.checks.append(("cold launch read SQLite", !cold.usedSnapshot))
        report.checks.append(("warm = cold = before suspension (digest \(digest))", warm.digest == digest && cold.digest == digest))
        let check = try StoreInspector(path: options.paths.store).check(snapshot: options.paths.snapshot)
        report.checks.append(("store check: " + check.items.map(\.name).joined(separator: ", "), check.passed))
        let failed = check.items.filter { !$0.passed }
        say("   integrity: warm \(warm.digest == digest ? "=" : "≠") cold \(cold.digest == digest ? "=" : "≠") "
            + "before suspension (digest \(digest)); store check "
            + (failed.isEmpty ? "passed (\(check.items.map(\.name).joined(separator: ", ")))"
               : "FAILED: " + failed.flatMap(\.problems).joined(separator: "; ")))
    }
}
