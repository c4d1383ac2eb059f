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
        // The app's first screen (the newest unread articles), shown as soon as the launch can.
        var firstScreen: [Article] = []
        let start = try await Store.openWarm(at: path, snapshot: snapshotPath, entities: DemoRunner.entities,
                                             configuration: configuration, firstScreen: DemoRunner.unreadQuery) {
            firstScreen = Array($0)
        }
        let content = ContentDigest(start.mainContext)
        let matches = try start.mainContext.objects(matching: DemoRunner.unreadQuery) == firstScreen
        let result = LaunchResult(mode: warm ? "warm" : "cold", outcome: start.outcome.description,
                                  usedSnapshot: start.outcome.usedSnapshot, timeToDataSeconds: start.timeToData.seconds,
                                  timeToFirstScreenSeconds: start.timeToFirstScreen?.seconds ?? start.timeToData.seconds,
                                  firstScreenEarly: start.showedFirstScreenEarly, firstScreenMatches: matches,
                                  feeds: content.feeds, articles: content.articles, unread: content.unread,
                                  starred: content.starred, digest: content.digest)
        try await start.store.close()
        return result
    }
}
