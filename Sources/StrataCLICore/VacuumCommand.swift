import ArgumentParser
import Strata

/// `strata vacuum DB`: checkpoint the WAL, rebuild the file without free pages, report what was
/// given back. The one command that writes to the store.
struct VacuumCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vacuum",
        abstract: "Checkpoint the WAL and VACUUM a store; report the bytes reclaimed.",
        discussion: """
            This is the only command that writes to the store. It refuses to run while another connection (an app, another strata command) has the store open, and keeps others out while it runs. The WAL frames reported are the changes an app left in the WAL without checkpointing them (0 after a clean close).

            Example:
              strata vacuum reader.sqlite
            """
    )

    @Argument(help: "The store file.", completion: .file())
    var db: String

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var common: CommonOptions

    func run() throws {
        common.logger().debug("vacuuming", metadata: ["path": "\(db)"])
        let report = try StoreInspector.vacuum(at: db)
        let console = Console.current
        if json {
            console.line(JSONValue.object([
                ("store", .string(db)),
                ("bytesBefore", .int(report.bytesBefore)),
                ("bytesAfter", .int(report.bytesAfter)),
                ("bytesReclaimed", .int(report.bytesReclaimed)),
                ("checkpointedFrames", .int(report.checkpointedFrames)),
                ("pagesBefore", .int(report.pagesBefore)),
                ("freePagesBefore", .int(report.freePagesBefore)),
                ("pagesAfter", .int(report.pagesAfter)),
            ]).rendered())
            return
        }
        console.line("vacuum \(db)")
        console.line("  checkpoint  \(Format.count(report.checkpointedFrames, "WAL frame")) copied into the database file")
        console.line("  pages       \(Format.count(report.pagesBefore)) → \(Format.count(report.pagesAfter)) "
                     + "(\(Format.count(report.freePagesBefore)) \(report.freePagesBefore == 1 ? "was" : "were") free)")
        console.line("  size        \(Format.bytes(report.bytesBefore)) → \(Format.bytes(report.bytesAfter)) "
                     + "(database and WAL); reclaimed \(Format.bytes(max(0, report.bytesReclaimed)))")
    }
}
