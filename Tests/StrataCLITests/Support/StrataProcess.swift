import Foundation
import StrataTestSupport
import StrataCLICore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The built `strata` executable, run in a child process as a user runs it: its standard output
/// read as it comes (to act on progress), its standard error collected, its exit status.
final class StrataProcess {
    /// The `strata` executable built next to the test bundle.
    static func executable() throws -> String {
        var directory = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        #if os(Linux)
        if let test = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            directory = URL(fileURLWithPath: test).deletingLastPathComponent()
        }
        #endif
        for _ in 0..<5 {
            let candidate = directory.appendingPathComponent("strata").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        throw CLIFailure(exitCode: 1, "the strata executable was not built next to the tests (build with --build-tests)")
    }

    /// What a finished run printed and how it ended.
    struct Result {
        let status: Int32
        let output: String
        let error: String
    }

    private let process = Process()
    private let output = Pipe()
    private let errors = Pipe()
    private var outputData = Data()
    private let errorData = Collected()

    /// Starts `strata arguments`.
    /// - Parameters:
    ///   - environment: the child's whole environment; the test process's when nil.
    ///   - launcher: a command to run `strata` through (`setpriv …`), with its arguments.
    init(_ arguments: [String], environment: [String: String]? = nil, launcher: [String] = []) throws {
        let strata = try Self.executable()
        process.executableURL = URL(fileURLWithPath: launcher.first ?? strata)
        process.arguments = Array(launcher.dropFirst()) + (launcher.isEmpty ? [] : [strata]) + arguments
        if let environment { process.environment = environment }
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Standard error is drained on its own thread, so that a child writing a lot there can
        // never block while the test waits on standard output.
        // A thread of its own, not libdispatch's global queues, whose threads Swift's tasks need.
        let errorHandle = errors.fileHandleForReading, collected = errorData
        let drain = Thread {
            collected.data = (try? errorHandle.readToEnd()) ?? Data()
            collected.done.signal()
        }
        drain.name = "strata-tests.stderr"
        drain.start()
    }

    /// Runs `strata arguments` to the end, waiting on a thread of its own (`offThread`): a
    /// child run under a sanitizer takes seconds, during which no thread Swift's tasks run on is
    /// held.
    static func run(_ arguments: [String], environment: [String: String]? = nil,
                    launcher: [String] = []) async throws -> Result {
        try await offThread {
            Swift.Result { try StrataProcess(arguments, environment: environment, launcher: launcher).finish() }
        }.get()
    }

    /// Reads standard output until what was read so far satisfies `condition` (true), or until
    /// the child closes it (false).
    func readOutput(until condition: (String) -> Bool) -> Bool {
        while !condition(String(decoding: outputData, as: UTF8.self)) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return false }
            outputData.append(chunk)
        }
        return true
    }

    /// ``readOutput(until:)`` bounded and off Swift's cooperative threads (``offThread(_:)``):
    /// when `seconds` (times ``waitScale``) pass first, the child is killed, which closes its
    /// output and ends the read with false.
    func readOutput(within seconds: Double, until condition: @escaping @Sendable (String) -> Bool) async -> Bool {
        let handoff = Handoff(process: self), pid = process.processIdentifier
        return await offThread {
            let timeout = DispatchWorkItem { _ = kill(pid, SIGKILL) }
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds * waitScale, execute: timeout)
            defer { timeout.cancel() }
            return handoff.process.readOutput(until: condition)
        }
    }

    /// ``finish()`` off Swift's cooperative threads.
    func finished() async throws -> Result {
        let handoff = Handoff(process: self)
        return try await offThread { Swift.Result { try handoff.process.finish() } }.get()
    }

    /// The process, handed to a thread of its own while the caller awaits it: `@unchecked` is
    /// safe because the awaiting caller does not use the process until that thread is done with
    /// it, so one thread at a time uses it.
    private struct Handoff: @unchecked Sendable {
        let process: StrataProcess
    }

    /// Sends SIGINT, as Ctrl-C in a terminal does.
    func interrupt() { process.interrupt() }

    /// Reads the rest of the output and waits for the child to exit.
    func finish() throws -> Result {
        outputData.append(try output.fileHandleForReading.readToEnd() ?? Data())
        process.waitUntilExit()
        errorData.done.wait()
        return Result(status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
                      error: String(decoding: errorData.data, as: UTF8.self))
    }

    /// Standard error's bytes, written once on the reader's thread before `done` is signalled and
    /// read only after waiting on `done` — the semaphore orders the two, hence `@unchecked`.
    private final class Collected: @unchecked Sendable {
        var data = Data()
        let done = DispatchSemaphore(value: 0)
    }
}

/// How to run a command without the right to write into a directory of mode 0555.
enum Unprivileged {
    /// Nothing for a user other than root (the mode applies to them already). For root, who
    /// bypasses permission checks, `setpriv` (util-linux) running the command as `nobody`
    /// (65534), without supplementary groups. Nil when neither is possible.
    static var launcher: [String]? {
        if getuid() != 0 { return [] }
        let setpriv = "/usr/bin/setpriv"
        guard FileManager.default.isExecutableFile(atPath: setpriv) else { return nil }
        return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    }
}
