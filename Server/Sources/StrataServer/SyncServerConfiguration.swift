import StrataSyncWire

/// What a sync service instance needs: where PostgreSQL is, where to listen, and its limits.
public struct SyncServerConfiguration: Sendable {
    /// The database every instance shares.
    public var postgres: PostgresURL
    /// The address to listen on (loopback unless told otherwise).
    public var host: String
    /// The port to listen on; 0 picks a free one (``SyncServer/run(gracefulShutdown:onRunning:)`` says which).
    public var port: Int
    /// The limits a push is checked against (`tooLarge` beyond them).
    public var limits: SyncLimits
    /// How long the change log keeps an entry; older entries are pruned and their cursors expire.
    public var logRetention: Duration
    /// How often an instance prunes the change log.
    public var pruneInterval: Duration
    /// The most PostgreSQL connections the instance's pool opens (the listening connection is one more).
    public var maximumConnections: Int

    /// A configuration with the protocol's default limits.
    public init(postgres: PostgresURL, host: String = "127.0.0.1", port: Int,
                limits: SyncLimits = SyncLimits(), logRetention: Duration = .seconds(30 * 24 * 3600),
                pruneInterval: Duration = .seconds(600), maximumConnections: Int = 20) {
        self.postgres = postgres
        self.host = host
        self.port = port
        self.limits = limits
        self.logRetention = logRetention
        self.pruneInterval = pruneInterval
        self.maximumConnections = maximumConnections
    }
}
