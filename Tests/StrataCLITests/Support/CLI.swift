import Foundation
import StrataCLICore

/// What one in-process run of `strata` did.
struct CLIResult {
    let code: Int32
    let output: String
    let error: String

    /// Standard error's lines.
    var errorLines: [String] { error.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
}

/// Runs `strata` in-process with `arguments`, capturing what it prints.
func runCLI(_ arguments: [String]) async -> CLIResult {
    let capture = CapturedConsole()
    let code = await Console.$current.withValue(capture.console) { await StrataCLI.run(arguments) }
    return CLIResult(code: code, output: capture.standardOutput, error: capture.standardError)
}

/// A fresh directory per test, removed at the end.
final class Scratch {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cli-\(UUID().uuidString)")
    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A file's bytes and modification date, to prove a command did not write it.
struct FileState: Equatable {
    let bytes: Data?
    let modified: Date?

    init(_ path: String) {
        bytes = try? Data(contentsOf: URL(fileURLWithPath: path))
        modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }
}
