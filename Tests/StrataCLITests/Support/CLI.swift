import Foundation
import StrataCLICore
import StrataTestSupport

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

