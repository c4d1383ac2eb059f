import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `StrataProbe` executable, built next to the test bundle (the test target depends on it).
enum CrashProbe {
    static var url: URL? {
        let exe = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                      ?? CommandLine.arguments[0])
        let candidate = exe.deletingLastPathComponent().appendingPathComponent("StrataProbe")
        return FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil
    }
}

/// A running probe whose stdout lines are read as they arrive.
final class ProbeRun: @unchecked Sendable {
    // Safe: `lines` and `buffer` are only touched while `lock` is held; `process` and `pipe` are
    // set once in init and only read afterwards.
    private let process = Process()
    private let pipe = Pipe()
    private let lock = NSCondition()
    private var lines: [String] = []
    private var buffer = Data()
    private var ended = false

    init(_ arguments: [String]) throws {
        guard let url = CrashProbe.url else {
            throw StrataTestError("StrataProbe is not built next to the tests; run `swift build --build-tests`")
        }
        process.executableURL = url
        process.arguments = arguments
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Read until EOF (the child's stdout closes when it exits or is killed), so that no line
        // written before the end is lost.
        let reader = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = reader.availableData
                append(data)
                if data.isEmpty { return }
            }
        }
    }

    private func append(_ data: Data) {
        lock.lock()
        defer { lock.unlock(); lock.broadcast() }
        if data.isEmpty { ended = true; return }
        buffer.append(data)
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
            buffer.removeSubrange(buffer.startIndex...newline)
        }
    }

    /// Blocks until the child's output ended (bounded).
    private func waitForEnd(seconds: Double = 30) {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        while !ended && Date() < deadline { _ = lock.wait(until: deadline) }
    }

    /// Blocks until `count` lines matching `prefix` arrived (or the process ended, or a timeout).
    func waitForLines(withPrefix prefix: String, count: Int, seconds: Double = 30) -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        while lines.filter({ $0.hasPrefix(prefix) }).count < count && !ended && Date() < deadline {
            _ = lock.wait(until: deadline)
        }
        return lines.filter { $0.hasPrefix(prefix) }
    }

    var allLines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    /// SIGKILL: no cleanup runs, no buffer is flushed — a crash.
    func kill() {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        waitForEnd()
    }

    func waitUntilExit() -> Int32 {
        process.waitUntilExit()
        waitForEnd()
        return process.terminationStatus
    }
}

struct StrataTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
