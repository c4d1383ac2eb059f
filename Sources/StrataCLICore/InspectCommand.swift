import ArgumentParser
import Strata

/// `strata inspect DB`: what a store holds and how big it is. Opens the file read-only.
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Show a store's entities, row counts, schema version, generation, sizes, indexes and change log.",
        discussion: """
            The store is opened read-only: inspecting never changes it.

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
        let logger = common.logger()
        logger.debug("opening read-only", metadata: ["path": "\(db)"])
        let summary = try StoreInspector(path: db).summary()
        let console = Console.current
        if json {
            console.line(summary.json.rendered())
        } else {
            for line in SummaryText.lines(summary) { console.line(line) }
        }
    }
}
