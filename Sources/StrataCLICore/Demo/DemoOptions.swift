/// What `strata demo` was asked to do.
struct DemoOptions: Sendable {
    var feeds: Int
    var articles: Int
    var seed: UInt64
    /// The store file; the snapshot goes beside it (see ``DemoPaths``).
    var paths: DemoPaths
    /// How many article IDs the sync API reports as read elsewhere (at most the unread ones).
    var readElsewhere: Int
    var workers: Int
    var batchSize: Int
    var json: Bool
    /// The executable to relaunch for the warm and cold starts.
    var executable: String
    var verbose: Bool
}
