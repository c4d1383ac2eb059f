import ArgumentParser

/// `strata snapshot`: tools for snapshot files.
struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Tools for snapshot files (warm-start archives of a main context).",
        subcommands: [SnapshotInfoCommand.self]
    )
}
