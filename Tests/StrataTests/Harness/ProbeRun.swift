import Foundation
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The `StrataProbe` executable, built next to the test bundle (the test target depends on it).
enum CrashProbe {
    static var url: URL? {
        var candidates: [URL] = []
        if let environment = ProcessInfo.processInfo.environment["STRATA_PROBE"] {
            candidates.append(URL(fileURLWithPath: environment))
        }
        let exe = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                      ?? CommandLine.arguments[0])
        candidates.append(exe.deletingLastPathComponent().appendingPathComponent("StrataProbe"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}

/// A running `StrataProbe` child: its stdin takes lines, its stdout lines are read as they arrive,
/// and it is reaped by a thread blocked in `waitpid`.
///
/// Spawned with `posix_spawn` rather than Foundation's `Process`, whose Linux implementation
/// keeps a retain cycle per launch (LeakSanitizer reports it), and so that every pipe end the
/// parent keeps is close-on-exec: a sibling child never inherits a write end, so EOF always comes.
final class ProbeRun: @unchecked Sendable {
    // Safe: `lines`, `buffer`, `ended`, `status` and `inputFD` are only touched while `lock` is
    // held; `pid` is set once in init and only read afterwards. The reader and reaper threads
    // keep the instance alive until the child's output ended and the child was reaped.
    let pid: pid_t
    private let lock = NSCondition()
    private var lines: [String] = []
    private var buffer: [UInt8] = []
    private var ended = false
    private var status: Int32?
    private var inputFD: Int32
    private static let spawning = NSLock()

    /// Starts the probe (or `executable`) with `arguments`; its stderr goes to ours when
    /// `showErrors`, into its output lines when `errorsInOutput`, else nowhere.
    init(_ arguments: [String], executable: URL? = nil, showErrors: Bool = false, errorsInOutput: Bool = false) throws {
        guard let url = executable ?? CrashProbe.url else {
            throw StrataTestError("""
                StrataProbe is not built next to the tests; run `swift build --build-tests` \
                or point STRATA_PROBE at it
                """)
        }
        // A child that died must fail the test, not kill this process with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        // Pipes are made and marked close-on-exec under one lock with the spawn, so no other
        // probe spawned meanwhile inherits an end of them (Glibc does not export pipe2).
        Self.spawning.lock()
        defer { Self.spawning.unlock() }
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1]
        guard pipe(&input) == 0 else { throw StrataTestError("pipe failed: errno \(errno)") }
        guard pipe(&output) == 0 else {
            close(input[0]); close(input[1])
            throw StrataTestError("pipe failed: errno \(errno)")
        }
        for descriptor in input + output { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        if errorsInOutput {
            posix_spawn_file_actions_adddup2(&actions, output[1], 2)
        } else if !showErrors {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }

        // The child starts with default signal handling, whatever this process ignores.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([url.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, url.path, &actions, &attributes, argv, environ)
        close(input[0])
        close(output[1])
        guard result == 0 else {
            close(input[1]); close(output[0])
            throw StrataTestError("posix_spawn \(url.path) failed: errno \(result)")
        }
        pid = child
        inputFD = input[1]

        let outputFD = output[0]
        Thread.detachNewThread { [self] in
            // Read until EOF (the child's stdout closes when it exits or is killed), so that no
            // line written before the end is lost.
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(outputFD, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                append(count > 0 ? chunk[0..<count] : [])
                if count <= 0 { break }
            }
            close(outputFD)
        }
        Thread.detachNewThread { [self] in
            // Wait for the exit without reaping, then reap under the lock: while `status` is nil
            // the pid is still ours (at worst a zombie), so `kill()` never signals a reused pid.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
            lock.lock()
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            status = raw
            lock.unlock()
            lock.broadcast()
        }
    }

    deinit {
        if inputFD >= 0 { close(inputFD) }
    }

    private func append(_ data: ArraySlice<UInt8>) {
        lock.lock()
        defer { lock.unlock(); lock.broadcast() }
        if data.isEmpty {
            if !buffer.isEmpty { lines.append(String(decoding: buffer, as: UTF8.self)) }
            buffer.removeAll()
            ended = true
            return
        }
        buffer.append(contentsOf: data)
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append(String(decoding: buffer[..<newline], as: UTF8.self))
            buffer.removeSubrange(...newline)
        }
    }

    /// Blocks until `done` holds (checked under the lock) or `seconds` passed; returns whether it held.
    private func wait(seconds: Double, until done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        lock.lock()
        defer { lock.unlock() }
        while !done() && Date() < deadline { _ = lock.wait(until: deadline) }
        return done()
    }

    /// Writes one line to the child's stdin (ignored once the child is gone).
    func send(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        guard inputFD >= 0 else { return }
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(inputFD, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    /// Closes the child's stdin: it reads EOF.
    func closeInput() {
        lock.lock()
        defer { lock.unlock() }
        if inputFD >= 0 { close(inputFD) }
        inputFD = -1
    }

    /// Blocks until `count` lines matching `prefix` arrived (or the output ended, or a timeout).
    func waitForLines(withPrefix prefix: String, count: Int, seconds: Double = 30) -> [String] {
        _ = wait(seconds: seconds) { ended || lines.filter { $0.hasPrefix(prefix) }.count >= count }
        return allLines.filter { $0.hasPrefix(prefix) }
    }

    /// ``waitForLines(withPrefix:count:seconds:)`` without holding a cooperative thread or the
    /// main actor while waiting.
    func lines(withPrefix prefix: String, count: Int, seconds: Double = 30) async -> [String] {
        await offThread { $0.waitForLines(withPrefix: prefix, count: count, seconds: seconds) }
    }

    /// The first line starting with `prefix`, waiting at most `seconds` for it (nil if it never came).
    func line(startingWith prefix: String, seconds: Double = 60) async -> String? {
        await lines(withPrefix: prefix, count: 1, seconds: seconds).first
    }

    /// Runs a blocking wait on a thread of its own (StrataTestSupport's `offThread`) and resumes
    /// with its result.
    private func offThread<T: Sendable>(_ wait: @escaping @Sendable (ProbeRun) -> T) async -> T {
        await StrataTestSupport.offThread { [self] in wait(self) }
    }

    var allLines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    /// SIGKILL: no cleanup runs, no buffer is flushed — a crash. Returns once the child is reaped
    /// and its output is read to the end.
    func kill() {
        lock.lock()
        if status == nil { _ = Glibc.kill(pid, SIGKILL) }
        lock.unlock()
        _ = waitUntilExit()
    }

    /// Waits (bounded) until the child exited and its output ended; its raw wait status, or nil
    /// if it is still running after `seconds`.
    func waitUntilExit(seconds: Double = 30) -> Int32? {
        guard wait(seconds: seconds, until: { ended && status != nil }) else { return nil }
        lock.lock()
        defer { lock.unlock() }
        return status
    }

    /// ``waitUntilExit(seconds:)`` without holding a cooperative thread or the main actor.
    func exited(seconds: Double = 30) async -> Int32? {
        await offThread { $0.waitUntilExit(seconds: seconds) }
    }

    /// ``kill()`` without holding a cooperative thread or the main actor.
    func killed() async {
        await offThread { $0.kill() }
    }

    /// The exit code from a raw wait status (nil when the child was killed by a signal).
    static func exitCode(_ status: Int32) -> Int32? {
        (status & 0x7f) == 0 ? (status >> 8) & 0xff : nil
    }
}

struct StrataTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
