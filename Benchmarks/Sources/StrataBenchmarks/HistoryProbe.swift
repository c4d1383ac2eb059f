#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
#error("HistoryProbe needs a POSIX C library: Glibc, Musl or Darwin")
#endif
import Foundation
import Strata

/// H2 and H4 run part of their work in a second process: this executable re-run in a hidden mode
/// (like M1's ``MemoryProbe``). `writer` is the other process that commits to the store file while
/// the benchmark holds it open (H2); `read` reads the history and reports its time and peak
/// memory, away from the benchmark's own data (H4).
enum HistoryProbe {
    static let childFlag = "--history-child"

    /// `CLOCK_MONOTONIC` in nanoseconds: on Linux one clock for the whole system, so a time
    /// taken in the child compares with one taken in the parent.
    static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// What a `read` child measured.
    struct Reading: Codable, Sendable {
        /// Peak RSS after opening the store, before reading.
        let baselinePeakBytes: Int
        /// Peak RSS after reading the whole history.
        let peakBytes: Int
        let seconds: Double
        let transactions: Int
        let changes: Int
        let ids: Int
    }

    @MainActor
    static func runChild(_ arguments: [String]) async throws {
        switch (arguments.first, arguments.count) {
        case ("writer", 2): try await runWriter(path: arguments[1])
        case ("read", 4):
            guard let generation = Int64(arguments[2]) else { throw BenchmarkError("\(childFlag) read: bad token") }
            try await runReader(path: arguments[1], since: ChangeToken(generation: generation), keepsAll: arguments[3] == "all")
        default:
            throw BenchmarkError("usage: \(childFlag) writer <database> | read <database> <generation> paged|all")
        }
    }

    // MARK: The writer (H2)

    /// Reads `commit N` lines from stdin; for each, one worker inserts N new articles, saves and
    /// persists, then prints `<before save> <committed>` (``monotonicNanoseconds()``). Ends at
    /// end of input.
    @MainActor
    private static func runWriter(path: String) async throws {
        let store = try await StrataPeer.open(path)
        let worker = store.makeWorkerContext(name: "h2-writer")
        guard let base = URL(string: "https://example.com/remote/") else { throw BenchmarkError("bad URL") }
        // Unique across the children of a run: each repetition starts a new one.
        let process = ProcessInfo.processInfo.processIdentifier
        var serial = 0
        while let line = await Task.detached(operation: { readLine() }).value {
            let words = line.split(separator: " ")
            guard words.count == 2, words[0] == "commit", let count = Int(words[1]) else { break }
            serial += 1
            let batch = (0..<count).map { index in
                Article(id: "remote-\(process)-\(serial)-\(index)", feedID: Int64(index % 100), title: "remote \(serial) \(index)",
                        summary: "", url: base.appendingPathComponent("\(process)/\(serial)/\(index)"), published: Date(),
                        isRead: false, isStarred: false)
            }
            let before = monotonicNanoseconds()
            try await worker.perform { worker in
                for article in batch { try worker.insert(article) }
                try worker.save()
            }
            try await store.persist()
            let committed = monotonicNanoseconds()
            FileHandle.standardOutput.write(Data("\(before) \(committed)\n".utf8))
        }
        try await store.close()
    }

    // MARK: The reader (H4)

    /// Reads the history after `token` through the paged sequence, counting; `keepsAll` also
    /// keeps every transaction in an array, as reading it at once would. Prints one JSON line.
    @MainActor
    private static func runReader(path: String, since token: ChangeToken, keepsAll: Bool) async throws {
        let store = try await StrataPeer.open(path)
        let baseline = MemoryProbe.status("VmHWM") ?? 0
        var kept: [HistoryTransaction] = []
        var transactions = 0, changes = 0, ids = 0
        let start = ContinuousClock.now
        for try await transaction in store.history(since: token) {
            transactions += 1
            changes += transaction.changes.count
            for change in transaction.changes { ids += change.ids.count }
            if keepsAll { kept.append(transaction) }
        }
        let elapsed = ContinuousClock.now - start
        let reading = Reading(baselinePeakBytes: baseline, peakBytes: MemoryProbe.status("VmHWM") ?? 0,
                              seconds: elapsed.milliseconds / 1000, transactions: transactions, changes: changes, ids: ids)
        print(String(decoding: try JSONEncoder().encode(reading), as: UTF8.self))
        withExtendedLifetime(kept) {}
        try await store.close()
    }

    /// Runs a `read` child and returns what it measured.
    static func read(_ path: String, since token: ChangeToken, keepsAll: Bool) throws -> Reading {
        try ChildProcess.run([childFlag, "read", path, "\(token.generation)", keepsAll ? "all" : "paged"],
                             what: "the history reader child")
    }
}

/// The parent's side of a `writer` child: commands go to its stdin, its lines come back through
/// an `AsyncStream` fed by a thread reading its stdout.
@MainActor
final class RemoteWriter {
    private let process = Process()
    private let input = Pipe()
    private var lines: AsyncStream<String>.AsyncIterator

    init(path: String) throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = [HistoryProbe.childFlag, "writer", path]
        process.standardInput = input
        process.standardOutput = output
        let (stream, continuation) = AsyncStream<String>.makeStream()
        lines = stream.makeAsyncIterator()
        let reading = output.fileHandleForReading
        Thread.detachNewThread {
            var buffer = Data()
            while true {
                let chunk = reading.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
            continuation.finish()
        }
        try process.run()
    }

    /// Asks the child to commit `count` new articles.
    func commit(_ count: Int) {
        input.fileHandleForWriting.write(Data("commit \(count)\n".utf8))
    }

    /// The child's times for its last commit: just before `save()`, and once it was committed.
    func committed() async throws -> (before: UInt64, committed: UInt64) {
        // An actor-isolated property cannot be mutated across the await: next on a copy (the
        // iterator's state lives in the stream's shared storage), then keep the copy.
        var iterator = lines
        let next = await iterator.next(isolation: #isolation)
        lines = iterator
        guard let line = next else { throw BenchmarkError("H2: the writer child ended early") }
        let words = line.split(separator: " ").compactMap { UInt64($0) }
        guard words.count == 2 else { throw BenchmarkError("H2: the writer child printed \(line)") }
        return (words[0], words[1])
    }

    /// Ends the child's input and waits for it to close its store and exit.
    func finish() throws {
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("H2: the writer child failed with status \(process.terminationStatus)")
        }
    }
}
