import Logging

extension StoreConfiguration {
    /// How much Strata logs, without `import Logging`: the levels of swift-log, least severe first.
    ///
    /// Strata logs routine work (opening, migrations, warm starts, snapshots written) at
    /// ``debug``, and uses ``warning`` and above only for what needs attention: a retry after a
    /// transient failure, a change set refused for good, a failure in background work that no
    /// caller can see.
    public enum LogLevel: String, Sendable, Hashable, CaseIterable {
        /// Everything, including the finest detail.
        case trace
        /// Routine events: the store opened, a migration ran, a warm start's outcome, a snapshot written.
        case debug
        /// Informational messages (Strata logs none at this level).
        case info
        /// Conditions that may need special handling (Strata logs none at this level).
        case notice
        /// Something went wrong and Strata is handling it: a retry after a transient failure.
        case warning
        /// A failure: a change set refused for good, a merge or a re-read that failed.
        case error
        /// Failures that need attention at once.
        case critical
    }

    /// The least severe level ``logger`` passes on to its handler; `.info` unless changed.
    ///
    /// Raise it to see Strata's routine work while debugging, or lower the noise further:
    ///
    /// ```swift
    /// var configuration = StoreConfiguration()
    /// configuration.logLevel = .debug     // the store opened, migrations, warm starts, snapshots
    /// let store = try await Store.open(at: path, entities: [Article.self], configuration: configuration)
    /// ```
    ///
    /// The level belongs to ``logger``: setting one sets the other's, and assigning a new logger
    /// brings that logger's level.
    public var logLevel: LogLevel {
        get { LogLevel(rawValue: logger.logLevel.rawValue) ?? .info }
        set { logger.logLevel = Logger.Level(rawValue: newValue.rawValue) ?? .info }
    }
}
