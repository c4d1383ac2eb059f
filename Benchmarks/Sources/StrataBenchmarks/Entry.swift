import Foundation

/// `swift run -c release --package-path Benchmarks StrataBenchmarks [--quick] [--json]`
///
/// Measures every scenario of the benchmark issue for every peer (raw `sqlite3`, GRDB, Strata)
/// on one deterministic data set and prints medians, ratios and whether each target is met.
/// Progress goes to stderr; the table (or, with `--json`, the JSON report) to stdout. Targets are
/// reported, never enforced: the exit status is non-zero only when a scenario could not run.
@main
struct StrataBenchmarks {
    /// A synchronous entry point that keeps the main thread in the run loop (which drains the
    /// main queue, where main-actor jobs run): an `async` main hands the main thread to
    /// `dispatch_main`, which exits it — valgrind (callgrind) then crashes creating threads.
    static func main() {
        Task { @MainActor in
            await run()
            exit(0)
        }
        while true { RunLoop.main.run() }
    }

    @MainActor
    static func run() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            if arguments.first == MemoryProbe.childFlag {
                try await MemoryProbe.runChild(Array(arguments.dropFirst()))
                return
            }
            if arguments.first == HistoryProbe.childFlag {
                try await HistoryProbe.runChild(Array(arguments.dropFirst()))
                return
            }
            let options = try Options(arguments)
            let benchmark = try Benchmark(options: options)
            defer { benchmark.cleanUp() }
            let start = ContinuousClock.now
            let report = try await benchmark.run()
            benchmark.log("finished in \(benchmark.format(ContinuousClock.now - start))")
            print(options.json ? try report.json() : report.text())
            if let path = options.jsonOutput { try report.json().write(toFile: path, atomically: true, encoding: .utf8) }
        } catch {
            FileHandle.standardError.write(Data("StrataBenchmarks: \(error)\n".utf8))
            exit(1)
        }
    }
}
