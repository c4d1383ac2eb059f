import Strata

/// A failure the CLI reports as one line on standard error, with an exit code.
public struct CLIFailure: Error, CustomStringConvertible {
    public let exitCode: Int32
    public let message: String

    public init(exitCode: Int32, _ message: String) {
        self.exitCode = exitCode
        self.message = message.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    public var description: String { message }

    static func usage(_ message: String) -> CLIFailure { CLIFailure(exitCode: ExitStatus.usage, message) }
    static func badInput(_ message: String) -> CLIFailure { CLIFailure(exitCode: ExitStatus.badInput, message) }

    /// A library error as one line naming the file, with the exit code its kind calls for.
    init(_ error: StrataError) {
        let exitCode: Int32
        switch error.code {
        case .unknownEntity, .unknownAttribute, .invalidValue:
            exitCode = ExitStatus.usage
        case .cannotOpen, .notADatabase, .corrupt, .newerSchema, .invalidSnapshot, .missingColumn, .typeMismatch,
             .unexpectedNull, .incompatibleSchema:
            exitCode = ExitStatus.badInput
        default:
            exitCode = ExitStatus.failure
        }
        var message = error.message
        if let path = error.path { message = "\(path): \(message)" }
        self.init(exitCode: exitCode, message)
    }
}
