import ArgumentParser
import Strata

/// `strata check DB [--snapshot FILE]`: integrity, foreign keys, change-log continuity, the
/// history's transactions and consumers, the entity tables, the stored values and, optionally,
/// a snapshot's validity. Exit code 1 when anything is wrong.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Check a store (and optionally a snapshot); exit code 1 when anything is wrong.",
        discussion: """
            Checks: SQLite's integrity_check and foreign_key_check; the change log (every generation after the floor present, entries name known entities); the history (transactions in order and apart, every entry up to the newest transaction in one, consumers between the floor and the newest generation); each entity's table, columns (and columns holding values no attribute reads), indexes, full-text table and change-log triggers; every stored value against its attribute's type (counts per attribute of values a fetch would fail on, and of NULLs in non-optional attributes); with --snapshot, that the snapshot would warm-start the store. The store is opened read-only.

            A damaged store (truncated, or with pages SQLite cannot read) is a failed check: SQLite's integrity report says what is wrong, and the checks it kept from running say why.

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

    /// Problems listed per check; the rest are counted.
    static let shownProblems = 20

    func run() throws {
        let report: CheckReport
        do {
            report = try StoreInspector.open(db, logging: common).check(snapshot: snapshot)
        } catch let error as StrataError where error.code == .corrupt {
            common.logger().debug("damaged file", metadata: ["path": "\(db)", "error": "\(error)"])
            report = try StoreInspector.checkDamagedFile(at: db, snapshot: snapshot, openError: error)
        }
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
            for line in Self.lines(report, db: db) { console.line(line) }
        }
        if !report.passed { throw ExitCode(ExitStatus.failure) }
    }

    /// The text report: a line per check, its problems indented under it — each line of a
    /// multi-line problem (SQLite's integrity report) too.
    static func lines(_ report: CheckReport, db: String) -> [String] {
        var lines = ["check \(db)"]
        let width = (report.items.map(\.name.count).max() ?? 0) + 2
        for item in report.items {
            let name = item.name.padding(toLength: width, withPad: " ", startingAt: 0)
            if item.passed {
                lines.append("  \(name)ok      \(item.detail)")
                continue
            }
            lines.append("  \(name)FAILED")
            for problem in item.problems.prefix(shownProblems) {
                for (index, line) in problem.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    lines.append((index == 0 ? "    - " : "      ") + line)
                }
            }
            if item.problems.count > shownProblems {
                lines.append("    - … and \(Format.count(item.problems.count - shownProblems, "more problem"))")
            }
        }
        let failed = report.items.filter { !$0.passed }.count
        lines.append(failed == 0 ? "all \(Format.count(report.items.count, "check")) passed"
                     : "\(failed) of \(Format.count(report.items.count, "check")) failed")
        return lines
    }
}
