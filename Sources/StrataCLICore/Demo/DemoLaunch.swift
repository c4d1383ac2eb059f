import Foundation
import Logging
import Strata

/// One relaunch of the demo app in a fresh process: open the store warm (from the snapshot)
/// or cold (no snapshot), and report how long the data took to show and what it was.
enum DemoLaunch {
    @MainActor
    static func run(store path: String, snapshot: String, warm: Bool, logger: Logger) async throws -> LaunchResult {
        var configuration = StoreConfiguration()
        configuration.logger = logger
        // A cold start is a launch without a usable snapshot: point at a file that does not exist.
        let snapshotPath = warm ? snapshot : snapshot + ".cold-start-has-no-snapshot"
        let start = try await Store.openWarm(at: path, snapshot: snapshotPath, entities: DemoRunner.entities,
                                             configuration: configuration)
        let content = ContentDigest(start.mainContext)
        let result = LaunchResult(mode: warm ? "warm" : "cold", outcome: start.outcome.description,
                                  usedSnapshot: start.outcome.usedSnapshot, timeToDataSeconds: start.timeToData.seconds,
                                  feeds: content.feeds, articles: content.articles, unread: content.unread,
                                  starred: content.starred, digest: content.digest)
        try await start.store.close()
        return result
    }
}
