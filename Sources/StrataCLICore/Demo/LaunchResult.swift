/// What a relaunched demo process (`strata demo-launch`) reports to the demo, as one JSON line.
struct LaunchResult: Codable, Sendable {
    /// `warm` (from the snapshot) or `cold` (from SQLite).
    var mode: String
    /// How the warm start went (``SnapshotOutcome``'s description).
    var outcome: String
    var usedSnapshot: Bool
    /// From opening the store to the main context holding its data.
    var timeToDataSeconds: Double
    /// From opening the store to the first screen (the 50 newest unread articles) shown.
    var timeToFirstScreenSeconds: Double
    /// Whether the first screen came from the snapshot's first chunk, before the main context was filled.
    var firstScreenEarly: Bool
    /// Whether the first screen equals the filled main context's answer.
    var firstScreenMatches: Bool
    var feeds: Int
    var articles: Int
    var unread: Int
    var starred: Int
    /// ``ContentDigest`` of what the main context held.
    var digest: String
}
