import Foundation
import Logging
@testable import Strata
import StrataTestSupport
import Testing

/// Strata is a library: routine work logs at `debug`, and `info` and above are kept for what
/// needs attention (swift-log's guidance for libraries). The log goes through the logger of the
/// store's configuration, captured here by a handler that records every message.
@Suite struct LogLevelTests {
    @MainActor @Test func routineWorkLogsNothingAtInfoOrAbove() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("store.sqlite")
        let snapshot = directory.path("store.snapshot")
        let log = LogRecorder()
        let migration = Migration("index feed names") { db in
            try db.execute("CREATE INDEX feed_by_name ON Feed (name)")
        }

        var configuration = StoreConfiguration()
        configuration.logger = log.logger
        do {  // create the store, save, persist, write a snapshot
            let store = try await Store.open(at: path, entities: [Article.self, Feed.self], configuration: configuration)
            let main = store.mainContext
            try await main.loadResidentEntities()
            let worker = store.makeWorkerContext(name: "import")
            try await worker.perform { worker in
                for index in 0..<20 { try worker.insert(Article.make(index)) }
                try worker.save()
            }
            try main.insert(Feed(id: 2, name: "Linux"))
            try main.save()
            try await store.persist()
            try await main.writeSnapshot(to: snapshot)
            try await store.close()
        }
        // Reopen from the snapshot, running a migration on the way.
        let warm = try await Store.openWarm(at: path, snapshot: snapshot, entities: [Article.self, Feed.self],
                                            migrations: [migration], configuration: configuration)
        #expect(warm.outcome == .used)
        try await warm.store.persist()

        let loud = log.records.filter { $0.level >= .info }
        #expect(loud.isEmpty, "routine work logged at info or above: \(loud)")
        // The routine events were logged — at debug — so the capture did see them.
        let debug = Set(log.records.filter { $0.level == .debug }.map(\.message))
        for event in ["opened store", "automatic migration", "ran migration", "snapshot written", "warm start"] {
            #expect(debug.contains(event), "no \(event) at debug: \(log.records)")
        }
        try await warm.store.close()
    }

    @Test func permanentChangeSetFailureLogsAnError() async throws {
        let directory = try TemporaryDirectory()
        let log = LogRecorder()
        let store = try await openStore(directory.path("store.sqlite")) {
            $0.logger = log.logger
            $0.logLevel = .warning  // what an app that wants only trouble would set
        }
        var changes = ChangeSet()
        changes.update(Article.make(404))  // not in the store: refused for good
        let submission = try store.submit(changes)
        await #expect(throws: StrataError.self) { try await submission.committed() }

        let failure = try #require(await log.first(where: { $0.level == .error }), "\(log.records)")
        #expect(failure.message == "change set failed")
        #expect(failure.metadata.contains("article-404"), "the log names the object: \(failure.metadata)")
        #expect(log.records.allSatisfy { $0.level >= .warning }, "the level set through the configuration filters: \(log.records)")
    }

    @Test func logLevelIsTheLoggersLevel() {
        var configuration = StoreConfiguration()
        #expect(configuration.logLevel == .info)  // swift-log's default
        for level in StoreConfiguration.LogLevel.allCases {
            configuration.logLevel = level
            #expect(configuration.logger.logLevel.rawValue == level.rawValue)
            #expect(configuration.logLevel == level)
        }
        var logger = Logger(label: "app")
        logger.logLevel = .trace
        configuration.logger = logger  // a new logger brings its own level
        #expect(configuration.logLevel == .trace)
    }
}

/// Every message a logger passes on to its handler: level, message and metadata as text.
final class LogRecorder: Sendable {
    struct Record: Sendable, CustomStringConvertible {
        let level: Logger.Level
        let message: String
        let metadata: String
        var description: String { "\(level) \(message) \(metadata)" }
    }

    private let stored = Locked<[Record]>([])

    /// A logger whose handler records here; it starts at `.trace`, so it sees everything.
    var logger: Logger {
        Logger(label: "strata-test") { [self] _ in RecordingHandler(recorder: self) }
    }

    var records: [Record] { stored.withLock { $0 } }

    /// The first record matching `predicate`, waiting up to `seconds` for it (background work
    /// may log after the call that caused it returned).
    func first(where predicate: (Record) -> Bool, within seconds: Double = 10) async -> Record? {
        let deadline = ContinuousClock.now + .seconds(seconds * waitScale)
        while ContinuousClock.now < deadline {
            if let record = records.first(where: predicate) { return record }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    fileprivate func append(_ record: Record) { stored.withLock { $0.append(record) } }

    private struct RecordingHandler: LogHandler {
        let recorder: LogRecorder
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            recorder.append(Record(level: event.level, message: event.message.description, metadata: "\(merged)"))
        }
    }
}
