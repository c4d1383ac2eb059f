import ArgumentParser
import Strata

/// `strata check DB [--snapshot FILE]`: integrity, foreign keys, change-log continuity, the
/// entity tables and, optionally, a snapshot's validity. Exit code 1 when anything is wrong.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a store (and optionally a snapshot); exit code 1 when anything is wrong.",
        discussion: """
            Checks: SQLite's integrity_check and foreign_key_check; the change log (every generation after
            the floor present, entries name known entities); each entity's table, columns, indexes,
            full-text table and change-log triggers; with --snapshot, that the snapshot would warm-start
            the store. The store is opened read-only.

            Examples:
              strata check reader.sqlite
              strata check reader.sqlite --snapshot reader.snapshot --json
            """
    )

    @Argument(help: "The store file.", completion: .file())
    var db: String

    @Option(help: "A snapshot to check against the store.", completion: .file())
    var snapshot: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var common: CommonOptions

    func run() throws {
        common.logger().debug("opening read-only", metadata: ["path": "\(db)"])
        let report = try StoreInspector(path: db).check(snapshot: snapshot)
        let console = Console.current
        if json {
            console.line(JSONValue.object([
                ("store", .string(db)),
                ("passed", .bool(report.passed)),
                ("checks", .array(report.items.map { item in
                    .object([("name", .string(item.name)), ("passed", .bool(item.passed)), ("detail", .string(item.detail)),
                             ("problems", .array(item.problems.map { .string($0) }))])
                })),
            ]).rendered())
        } else {
            console.line("check \(db)")
            let width = (report.items.map(\.name.count).max() ?? 0) + 2
            for item in report.items {
                let name = item.name.padding(toLength: width, withPad: " ", startingAt: 0)
                if item.passed {
                    console.line("  \(name)ok      \(item.detail)")
                } else {
                    console.line("  \(name)FAILED")
                    for problem in item.problems.prefix(20) { console.line("    - \(problem)") }
                    if item.problems.count > 20 { console.line("    - … and \(item.problems.count - 20) more") }
                }
            }
            let failed = report.items.filter { !$0.passed }.count
            console.line(failed == 0 ? "all \(report.items.count) checks passed"
                         : "\(failed) of \(report.items.count) checks failed")
        }
        if !report.passed { throw ExitCode(ExitStatus.failure) }
    }
}
