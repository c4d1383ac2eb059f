import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where commands write: standard output and standard error, or — in tests — a capture.
///
/// Commands read ``current`` (a task-local), so a test can run a command in-process and collect
/// what it printed without touching the process's real output.
public struct Console: Sendable {
    /// The two streams a command writes to.
    public enum Stream: Sendable { case output, error }

    /// Whether standard output is a terminal (progress bars and live lines) rather than a pipe or
    /// a file (plain lines, for CI logs).
    public let isTerminal: Bool
    private let sink: @Sendable (Stream, String) -> Void

    public init(isTerminal: Bool, sink: @escaping @Sendable (Stream, String) -> Void) {
        self.isTerminal = isTerminal
        self.sink = sink
    }

    /// The process's standard output and standard error.
    public static let standard = Console(isTerminal: isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb") { stream, text in
        let handle = stream == .output ? FileHandle.standardOutput : FileHandle.standardError
        handle.write(Data(text.utf8))
    }

    /// The console commands write to.
    @TaskLocal public static var current = Console.standard

    /// Writes a line to standard output.
    public func line(_ text: String = "") { sink(.output, text + "\n") }
    /// Writes text to standard output as is (for live lines that redraw themselves).
    public func write(_ text: String) { sink(.output, text) }
    /// Writes a line to standard error.
    public func errorLine(_ text: String) { sink(.error, text + "\n") }
}
