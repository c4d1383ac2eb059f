import Foundation

/// A ``Console`` that keeps what is written, for running commands in-process (tests).
public final class CapturedConsole: @unchecked Sendable {
    // Safe: `output` and `error` are only read or written while `lock` is held.
    private let lock = NSLock()
    private var output = ""
    private var error = ""
    private let isTerminal: Bool

    public init(isTerminal: Bool = false) { self.isTerminal = isTerminal }

    /// The console that writes here.
    public var console: Console {
        Console(isTerminal: isTerminal) { [self] stream, text in
            lock.lock()
            defer { lock.unlock() }
            if stream == .output { output += text } else { error += text }
        }
    }

    /// Everything written to standard output so far.
    public var standardOutput: String {
        lock.lock()
        defer { lock.unlock() }
        return output
    }

    /// Everything written to standard error so far.
    public var standardError: String {
        lock.lock()
        defer { lock.unlock() }
        return error
    }
}
