import ArgumentParser

/// The `strata` command: the demo and the store inspection tools.
public struct StrataCommand: AsyncParsableCommand {
    // Help text: one line per paragraph, so that ArgumentParser wraps it to the terminal; only
    // examples and tables are broken by hand, and they fit in 80 columns.
    public static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Strata's demo and tools for inspecting Strata stores.",
        discussion: """
            Examples:
              strata demo                    the RSS reader demo (100,000 articles)
              strata demo --articles 500 --json
              strata inspect reader.sqlite   entities, counts, generation, sizes, indexes
              strata query reader.sqlite Article --sort published:desc --limit 10 \\
                  --where "isRead = false AND feedID IN (1, 2)"
              strata history reader.sqlite --follow   transactions, live
              strata snapshot info reader.snapshot --store reader.sqlite
              strata check reader.sqlite --snapshot reader.snapshot
              strata vacuum reader.sqlite

            Exit codes: 0 ok, 1 a check or an operation failed, 2 bad usage, 3 bad input file, 130 interrupted (Ctrl-C).

            Shell completions: strata --generate-completion-script bash|zsh|fish
            """,
        version: StrataVersion.current,
        subcommands: [DemoCommand.self, InspectCommand.self, QueryCommand.self, HistoryCommand.self, SnapshotCommand.self,
                      CheckCommand.self, VacuumCommand.self, DemoLaunchCommand.self]
    )

    public init() {}
}
