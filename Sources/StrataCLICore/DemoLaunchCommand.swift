import ArgumentParser
import Foundation

/// `strata demo-launch` (hidden): the relaunched app of the demo's step 6. Opens the store warm or
/// cold and prints one JSON line (``LaunchResult``) for the demo to read.
struct DemoLaunchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-launch",
        abstract: "Relaunch the demo app once (used by `strata demo`).",
        shouldDisplay: false
    )

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case warm, cold
    }

    @Option(help: "The demo's store file.")
    var path: String

    @Option(help: "The demo's snapshot file.")
    var snapshot: String

    @Option(help: "warm (from the snapshot) or cold (from SQLite).")
    var mode: Mode

    @OptionGroup var common: CommonOptions

    func run() async throws {
        guard FileManager.default.fileExists(atPath: path) else { throw CLIFailure.badInput("\(path): no such file") }
        let result = try await Self.launch(path: path, snapshot: snapshot, warm: mode == .warm, common: common)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        Console.current.line(String(decoding: try encoder.encode(result), as: UTF8.self))
    }

    @MainActor
    private static func launch(path: String, snapshot: String, warm: Bool, common: CommonOptions) async throws -> LaunchResult {
        try await DemoLaunch.run(store: path, snapshot: snapshot, warm: warm, logger: common.logger())
    }
}
