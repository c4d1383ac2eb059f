/// What a server accepts in one request; a push beyond any limit is refused whole
/// (``SyncProtocolError/Code/tooLarge``).
public struct SyncLimits: Sendable, Hashable {
    /// The largest request body, in bytes.
    public var maxRequestBytes: Int
    /// The most entries in one push.
    public var maxEntries: Int
    /// The most keys in one entry.
    public var maxIDsPerEntry: Int
    /// The longest device ID, entity name, attribute name or text key, in UTF-8 bytes.
    public var maxNameBytes: Int

    /// Limits.
    public init(maxRequestBytes: Int = 8 << 20, maxEntries: Int = 10_000, maxIDsPerEntry: Int = 100_000,
                maxNameBytes: Int = 256) {
        self.maxRequestBytes = maxRequestBytes
        self.maxEntries = maxEntries
        self.maxIDsPerEntry = maxIDsPerEntry
        self.maxNameBytes = maxNameBytes
    }

    /// The server's defaults.
    public static let `default` = SyncLimits()
}
