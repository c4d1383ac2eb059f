import ArgumentParser
import Strata

/// `strata inspect DB`: what a store holds and how big it is. Opens the file read-only.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a store's entities, row counts, schema version and history, generation, sizes, indexes and change log.",
        discussion: """
            The store is opened read-only: inspecting never changes it. This works in a directory you cannot write too (as do query, check and snapshot info): there, a store without its -shm file is read as its database file alone, and a warning says when a -wal beside it could not be read.

            Examples:
              strata inspect reader.sqlite
              strata inspect reader.sqlite --json | jq '.entities[].rows'
            """
    )

    @Argument(help: "The store file.", completion: .file())
    var db: String

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var common: CommonOptions

    func run() throws {
        let summary = try StoreInspector.open(db, logging: common).summary()
        let console = Console.current
        if json {
            console.line(summary.json.rendered())
        } else {
            for line in SummaryText.lines(summary) { console.line(line) }
        }
    }
}
