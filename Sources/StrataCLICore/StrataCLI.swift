import ArgumentParser
import Strata

/// Runs the `strata` command line: parses, runs the subcommand, and turns every failure into
/// one line on standard error and an exit code (see ``ExitStatus``).
public enum StrataCLI {
    /// Runs `strata` with `arguments` (without the program name), writing to ``Console/current``.
    /// - Returns: the exit code.
    public static func run(_ arguments: [String]) async -> Int32 {
        do {
            var command = try StrataCommand.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return ExitStatus.ok
        } catch {
            return report(error)
        }
    }

    static func report(_ error: Error) -> Int32 {
        let console = Console.current
        switch error {
        case let failure as CLIFailure:
            console.errorLine("strata: error: \(failure.message)")
            return failure.exitCode
        case let error as StrataError:
            return report(CLIFailure(error))
        default:
            let code = StrataCommand.exitCode(for: error)
            let message = StrataCommand.fullMessage(for: error)
            if code == .success {
                if !message.isEmpty { console.line(message) }
                return ExitStatus.ok
            }
            if !message.isEmpty { console.errorLine(message) }
            return code == .validationFailure ? ExitStatus.usage : code.rawValue
        }
    }
}
