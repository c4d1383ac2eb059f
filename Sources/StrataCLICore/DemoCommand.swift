import ArgumentParser
import Foundation

/// `strata demo`: an offline RSS reader's life on an embedded store (see ``DemoRunner``).
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the offline RSS reader demo: sync import, bulk update, merge conflict, search, warm vs cold start.",
        discussion: """
            Steps: 1 first launch (no snapshot: cold start); 2 sync import on worker contexts while the main context's live query and counts update; 3 a bulk "read elsewhere" update; 4 a merge conflict between the main context and a worker; 5 full-text search; 6 snapshot, then relaunches in fresh processes, warm from the snapshot and cold from SQLite in turn, three of each (medians reported), with an integrity check; 7 a summary table.

            The data is generated deterministically from --seed. Each run starts by deleting the previous run's store and snapshot at the same path (only if that store is the demo's own). Options that would leave a step nothing to show are refused. Ctrl-C stops the demo and says how many articles were committed to the store (exit code 130).

            Examples:
              strata demo
              strata demo --feeds 20 --articles 20000 --seed 7
              strata demo --path /tmp/reader.sqlite --json
            """
    )

    @Option(help: "Number of feeds.")
    var feeds = 100

    @Option(help: "Number of articles.")
    var articles = 100_000

    @Option(help: "Seed for the generated data.")
    var seed: UInt64 = 42

    @Option(help: "The store file, in a directory that exists (default: $XDG_DATA_HOME/strata/demo.sqlite or ~/.local/share/strata/demo.sqlite, where ~ is $HOME); the snapshot is written beside it.",
            completion: .file())
    var path: String?

    @Option(help: "How many articles the sync API reports as read elsewhere (default: a tenth of the articles).")
    var readElsewhere: Int?

    @Option(help: "Number of worker contexts importing.")
    var workers = 4

    @Option(help: "Articles per worker save.")
    var batch = 2_000

    @Flag(help: "Print the report as JSON (no progress output).")
    var json = false

    @Option(help: .hidden)
    var executable: String?

    @OptionGroup var common: CommonOptions

    private var readElsewhereCount: Int { readElsewhere ?? StepRequirements.defaultReadElsewhere(articles: articles) }

    func validate() throws {
        guard feeds >= 1 else { throw ValidationError("--feeds must be at least 1") }
        guard articles >= 1, articles <= 999_999 else { throw ValidationError("--articles must be between 1 and 999,999") }
        guard readElsewhereCount >= 1 else {
            throw ValidationError("--read-elsewhere must be at least 1 (step 3 marks that many articles read)")
        }
        guard workers >= 1, workers <= 64 else { throw ValidationError("--workers must be between 1 and 64") }
        guard batch >= 1 else { throw ValidationError("--batch must be at least 1") }
        try StepRequirements.check(DataGenerator(seed: seed, feeds: feeds, articles: articles), readElsewhere: readElsewhereCount)
    }

    func run() async throws {
        let store: String
        if let path {
            try DemoPaths.requireDirectory(of: path)
            store = path
        } else {
            store = try DemoPaths.defaultStore()
        }
        let options = DemoOptions(feeds: feeds, articles: articles, seed: seed, paths: DemoPaths(store: store),
                                  readElsewhere: readElsewhereCount, workers: workers, batchSize: batch, json: json,
                                  executable: executable ?? Relauncher.currentExecutable, verbose: common.verbose)
        try await Self.run(options, console: Console.current, common: common)
    }

    @MainActor
    private static func run(_ options: DemoOptions, console: Console, common: CommonOptions) async throws {
        try await DemoRunner(options: options, console: console, logger: common.logger()).run()
    }
}
