import ArgumentParser
import Foundation
import Strata

/// `strata snapshot info FILE [--store DB]`: a snapshot's header, table of contents, sizes and
/// compression, whether its payload checks out and — with `--store` — whether it would
/// warm-start that store. Reads both files only.
struct SnapshotInfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a snapshot's header, table of contents, sizes, compression ratio and validity.",
        discussion: """
            The whole file is checked (header CRC, every LZ4 frame's checksum). With --store, it is also checked against that store: same store, same schema, a generation the change log still reaches. Exit code 1 when it is not valid for the store; 3 when the file cannot be read as a snapshot.

            Examples:
              strata snapshot info reader.snapshot
              strata snapshot info reader.snapshot --store reader.sqlite --json
            """
    )

    @Argument(help: "The snapshot file.", completion: .file())
    var file: String

    @Option(help: "A store to check the snapshot against.", completion: .file())
    var store: String?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var common: CommonOptions

    func run() throws {
        guard FileManager.default.fileExists(atPath: file) else {
            throw CLIFailure.badInput("\(file): no such file")
        }
        let inspector = try store.map { try StoreInspector.open($0, logging: common) }
        let header: SnapshotHeader
        do {
            header = try Snapshot.verify(at: file)
        } catch let error as StrataError {
            throw CLIFailure(error)
        }
        let validity = try inspector.map { try $0.snapshotValidity(at: file) }
        let report = SnapshotReport(file: file, header: header, store: store, validity: validity)
        let console = Console.current
        if json {
            console.line(report.json.rendered())
        } else {
            for line in report.lines { console.line(line) }
        }
        if let validity, !validity.isValid { throw ExitCode(ExitStatus.failure) }
    }
}
