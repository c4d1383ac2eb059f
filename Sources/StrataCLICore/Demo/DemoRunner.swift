import Foundation
import Logging
import Strata

/// Runs `strata demo`: an offline RSS reader's life, step by step, on the main actor (where the
/// main context lives), printing a short header per step, live progress on a terminal, and a
/// final table — or, with `--json`, only the report.
@MainActor
final class DemoRunner {
    static let entities: [any Entity.Type] = [Feed.self, Article.self]
    /// The reader's main list: unread articles, newest first, as much as a screen shows.
    /// Computed, not a stored global: a filter's nodes are an indirect enum whose case tag lives in
    /// the pointer's spare bits, which LeakSanitizer cannot follow from a global.
    static var unreadQuery: Query<Article> {
        Query<Article>(where: Attribute("isRead") == false, sortedBy: [Attribute("published").descending], limit: 50)
    }

    let options: DemoOptions
    let console: Console
    let logger: Logger
    let generator: DataGenerator
    let clock = ContinuousClock()
    var report = DemoReport()

    private(set) var store: Store!
    private(set) var main: MainContext!
    private(set) var counts: LiveCounts!
    private(set) var unreadList: LiveQuery<Article>!
    private var interruption: InterruptReporter?

    init(options: DemoOptions, console: Console, logger: Logger) {
        self.options = options
        self.console = console
        self.logger = logger
        self.generator = DataGenerator(seed: options.seed, feeds: options.feeds, articles: options.articles)
    }

    var configuration: StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.logger = logger
        return configuration
    }

    /// Runs every step; throws ``ExitCode`` 1 when an integrity check failed. Ctrl-C meanwhile
    /// reports what was committed and exits (``InterruptReporter``).
    func run() async throws {
        let start = clock.now
        let interruption = InterruptReporter(store: options.paths.store, articles: options.articles, console: console)
        self.interruption = interruption
        defer { interruption.cancel() }
        say("Strata demo: an offline RSS reader — \(Format.count(options.feeds, "feed")), "
            + "\(Format.count(options.articles, "article")), seed \(options.seed)")
        say("store \(options.paths.store)")
        try await firstLaunch()
        try await syncImport()
        try await readElsewhere()
        try await mergeConflict()
        try await search()
        try await suspendAndRelaunch()
        report.totalSeconds = (clock.now - start).seconds
        summarize()
        if !report.passed {
            throw CLIFailure(exitCode: ExitStatus.failure, "demo integrity check failed: "
                             + report.checks.filter { !$0.1 }.map(\.0).joined(separator: ", "))
        }
    }

    // MARK: Output

    /// A line for people (not printed with `--json`).
    func say(_ line: String = "") {
        if !options.json { console.line(line) }
    }

    func heading(_ number: Int, _ title: String) {
        interruption?.enter(step: number)
        say()
        say("\(number)  \(title)")
    }

    /// Records a step with the live counts as they are now.
    func record(_ number: Int, _ name: String, _ seconds: Double, _ details: [(String, JSONValue)] = []) {
        let feeds = main.objects(Feed.self).count
        report.steps.append(DemoReport.Step(number: number, name: name, seconds: seconds, feeds: feeds,
                                            articles: counts.articles, unread: counts.unread, starred: counts.starred,
                                            details: details))
    }

    // MARK: 1. First launch

    private func firstLaunch() async throws {
        heading(1, "First launch")
        try options.paths.clear()
        let warm = try await Store.openWarm(at: options.paths.store, snapshot: options.paths.snapshot,
                                            entities: Self.entities, configuration: configuration)
        store = warm.store
        main = warm.mainContext
        counts = LiveCounts(context: main)
        unreadList = try main.observe(Self.unreadQuery)
        say("   \(Self.describe(warm.outcome)): \(Format.count(counts.articles, "article")) on screen after "
            + Format.duration(warm.timeToData))
        record(1, "first launch (\(warm.outcome.usedSnapshot ? "warm" : "cold"))", warm.timeToData.seconds,
               [("outcome", .string(warm.outcome.description))])
    }

    static func describe(_ outcome: SnapshotOutcome) -> String {
        switch outcome {
        case .used: return "snapshot used as is"
        case .caughtUp(let changes): return "snapshot used, caught up \(Format.count(changes, "change"))"
        case .coldStart(let error): return "\(error.message) → cold start from SQLite"
        }
    }

    // MARK: 7. Summary

    private func summarize() {
        if options.json {
            console.line(report.json(options: options).rendered())
            return
        }
        heading(7, "Summary")
        for line in report.tableLines() { say(line) }
        say()
        for (name, passed) in report.checks { say("   \(passed ? "✓" : "✗") \(name)") }
        say("   total \(Format.seconds(report.totalSeconds))")
    }
}
