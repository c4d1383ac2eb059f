import ArgumentParser

/// The `strata` command: the demo and the store inspection tools.
public struct StrataCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Strata's demo and tools for inspecting Strata stores.",
        discussion: """
            Examples:
              strata demo                                  run the RSS reader demo (100 feeds, 100,000 articles)
              strata demo --feeds 5 --articles 500 --json  a small run, as JSON
              strata inspect reader.sqlite                 entities, counts, generation, sizes, indexes
              strata query reader.sqlite Article --where "isRead = false AND feedID IN (1, 2)" \\
                  --sort published:desc --limit 10
              strata snapshot info reader.snapshot --store reader.sqlite
              strata check reader.sqlite --snapshot reader.snapshot
              strata vacuum reader.sqlite

            Exit codes: 0 ok, 1 a check failed, 2 bad usage, 3 bad input file.
            Shell completions: strata --generate-completion-script bash|zsh|fish
            """,
        subcommands: [DemoCommand.self, InspectCommand.self, QueryCommand.self, SnapshotCommand.self, CheckCommand.self,
                      VacuumCommand.self, DemoLaunchCommand.self]
    )

    public init() {}
}
