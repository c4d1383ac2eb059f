import ArgumentParser
import Logging

/// Options every subcommand takes.
struct CommonOptions: ParsableArguments {
    @Flag(name: .shortAndLong, help: "Log diagnostics (swift-log, debug level) to standard error.")
    var verbose = false

    /// A logger to standard error: debug level with `--verbose`, warnings only otherwise.
    func logger(_ label: String = "strata") -> Logger {
        var logger = Logger(label: label) { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = verbose ? .debug : .warning
        return logger
    }
}
