import Foundation

/// How a ``SyncEngine`` works: its history author, batch and page sizes, timing.
///
/// ```swift
/// var configuration = SyncConfiguration()
/// configuration.pushDebounce = 2
/// let engine = SyncEngine(store: store, transport: transport, entities: [Article.self],
///                         configuration: configuration)
/// ```
public struct SyncConfiguration: Sendable {
    /// The author of what the engine writes to the store (`ChangeSet.transactionAuthor`): its
    /// transactions are never pushed back.
    public var author = "sync"
    /// The most entries one push carries (the server refuses more than 10,000).
    public var maxEntriesPerPush = 1_000
    /// The largest push body, in bytes: a batch whose JSON would be larger is made of fewer
    /// entries (the server refuses bodies over its `--max-request-bytes`, 8 MiB by default).
    public var maxPushBytes = 6 << 20
    /// The most keys one entry carries (the server refuses more than 100,000).
    public var maxIDsPerEntry = 50_000
    /// The most entries one pull asks for (the server serves at most 5,000).
    public var pullLimit = 500
    /// The most records one page of a full pull asks for.
    public var recordsLimit = 500
    /// Automatic mode: how long a pull waits on the server for new changes (0–60 seconds; a
    /// value outside is taken as the nearest bound).
    public var pullWait = 30
    /// Automatic mode: how long after a local save the push starts, so that a burst of saves
    /// travels together.
    public var pushDebounce: TimeInterval = 0.5
    /// The first retry's delay after a transient failure; each next one doubles, up to
    /// ``maximumRetryDelay``.
    public var initialRetryDelay: TimeInterval = 1
    /// The longest delay between retries.
    public var maximumRetryDelay: TimeInterval = 60

    /// The defaults.
    public init() {}

    /// The delay before retry number `attempt` (1 for the first): exponential, capped.
    func retryDelay(attempt: Int) -> TimeInterval {
        min(maximumRetryDelay, initialRetryDelay * pow(2, Double(max(0, min(attempt - 1, 30)))))
    }
}
