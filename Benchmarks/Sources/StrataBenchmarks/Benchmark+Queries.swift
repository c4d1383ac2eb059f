import Foundation
import GRDB
import Strata

/// P8 ("unread of feed F" × 100) and P8b (a list screen × 100), on the cold-started main context.
extension Benchmark {
    func queryScenarios(_ main: MainContext) throws {
        let feeds = Array(0..<DataSet.feeds)
        let raw = try RawDatabase(path: try file(.raw))
        let codable = try GRDBPeer.open(try file(.grdb), create: false)
        let handWritten = try GRDBPeer.open(try file(.grdbHandWritten), create: false)
        if wants("P8") { try unreadOfFeedsScenario(feeds, main, raw, codable, handWritten) }
        if wants("P8b") { try listScreenScenario(feeds, main, raw, codable, handWritten) }
    }

    // MARK: P8 — "unread of feed F"

    private func unreadOfFeedsScenario(_ feeds: [Int64], _ main: MainContext, _ raw: RawDatabase,
                                       _ codable: DatabasePool, _ handWritten: DatabasePool) throws {
        var result = ScenarioResult(id: "P8", title: "\"unread of feed F\" × \(feeds.count) feeds",
                                    target: "≤ 0.3× GRDB fetchAll", [.fasterGRDB(0.3)])
        let expected = data.articles.filter { !$0.isRead }.count
        for _ in 0..<options.repetitions {
            let counts = [
                try measure(&result, .raw, objects: expected) { try raw.unreadOfFeeds(feeds) },
                try measure(&result, .grdb, objects: expected) { try GRDBPeer.unreadOfFeeds(GRDBArticle.self, feeds, in: codable) },
                try measure(&result, .grdbHandWritten, objects: expected) {
                    try GRDBPeer.unreadOfFeeds(GRDBHandWrittenArticle.self, feeds, in: handWritten)
                },
                try measure(&result, .strata, objects: expected) { () throws -> Int in
                    var total = 0
                    for feed in feeds { total += try main.objects(matching: StrataPeer.unreadQuery(feed: feed)).count }
                    return total
                },
            ]
            try expect(counts.allSatisfy { $0 == expected },
                       "P8 counts (raw, GRDB Codable, GRDB hand-written, Strata): \(counts), expected \(expected)")
        }
        // The first pass builds every value; later passes get the ones the main context kept
        // (StoreConfiguration.valueCacheLimit, default 100,000 per entity: all 70k unread fit).
        result.details["strata first pass ms (values built, none kept yet)"] = result.samples[.strata]?.first
        result.notes.append("\(expected) rows in all; Strata's main context keeps the values it built "
                            + "(valueCacheLimit), so its passes after the first build none")
        record(result)
    }

    // MARK: P8b — list screen

    private func listScreenScenario(_ feeds: [Int64], _ main: MainContext, _ raw: RawDatabase,
                                    _ codable: DatabasePool, _ handWritten: DatabasePool) throws {
        var result = ScenarioResult(id: "P8b", title: "list screen × \(feeds.count): count + first 50 newest unread of feed F",
                                    target: "≤ 0.05× GRDB", [.fasterGRDB(0.05)])
        let expected = data.listScreens(feeds)
        let objects = expected.pageIDs.count
        var builtTimes: [Double] = []
        for _ in 0..<options.repetitions {
            // Beside the figure (untimed by it): the same screens with all 50 values of each page built.
            let start = ContinuousClock.now
            let built = try StrataPeer.listScreensBuildingValues(feeds, in: main)
            builtTimes.append((ContinuousClock.now - start).milliseconds)
            try expect(built == expected, "P8b screens with values built differ from the data set")
            let screens = [
                try measure(&result, .raw, objects: objects) { try raw.listScreens(feeds) },
                try measure(&result, .grdb, objects: objects) { try GRDBPeer.listScreens(GRDBArticle.self, feeds, in: codable) },
                try measure(&result, .grdbHandWritten, objects: objects) {
                    try GRDBPeer.listScreens(GRDBHandWrittenArticle.self, feeds, in: handWritten)
                },
                try measure(&result, .strata, objects: objects) { try StrataPeer.listScreens(feeds, in: main) },
            ]
            try expect(screens.allSatisfy { $0 == expected },
                       "P8b screens (raw, GRDB Codable, GRDB hand-written, Strata) differ from the data set: unread "
                       + "\(screens.map(\.unread)), expected \(expected.unread); page rows \(screens.map(\.pageIDs.count))")
        }
        result.details["strata with every page value built ms"] = Statistics(builtTimes)?.median
        result.notes.append("\(expected.unread) unread counted, \(objects) page rows read, in all; Strata's pages are "
                            + "lazy results (MainContext.results(matching:): IDs and rows, values built on access), "
                            + "the peers build every row's record")
        record(result)
    }
}
