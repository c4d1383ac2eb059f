import Foundation
import Strata

/// P6 (cold start), then, on the main context it filled, the queries (P8, P8b) and the snapshot
/// write (P9) that the warm starts read.
extension Benchmark {
    // MARK: P6 — cold start

    func coldStartQueryAndSnapshotScenarios() async throws {
        let strataPath = try file(.strata)
        var cold = ScenarioResult(id: "P6", title: "cold start: open + main context filled from SQLite",
                                  target: "≤ 1.3× raw fetch-all", [.ratio(.raw, 1.3)])
        var kept: (Store, MainContext)?
        let coldRepetitions = wants("P6") ? options.repetitions : 1
        var strataTimes: [ProcessTimes] = []
        for repetition in 0..<coldRepetitions {
            if let (store, _) = kept {
                try await store.close()
                kept = nil
            }
            try fetchAllReferences(into: &cold)
            let times = ProcessTimes.now()
            let (store, main) = try await measure(&cold, .strata, objects: articles.count) { () async throws -> (Store, MainContext) in
                let store = try await StrataPeer.open(strataPath)
                let main = store.mainContext
                try await main.loadResidentEntities()
                return (store, main)
            }
            let spent = ProcessTimes.now().since(times)
            strataTimes.append(spent)
            try expect(main.registeredCount(Article.self) == articles.count, "Strata cold start holds every article")
            kept = (store, main)
            log("P6 repetition \(repetition + 1): raw \(format(cold, .raw)), GRDB Codable \(format(cold, .grdb)), "
                + "GRDB hand-written \(format(cold, .grdbHandWritten)), Strata \(format(cold, .strata)); Strata's CPU: \(spent.description)")
        }
        guard let (store, main) = kept else { return }
        ProcessTimes.record(strataTimes, in: &cold)
        if wants("P6") { record(cold) }
        if wantsAny("P8", "P8b") { try queryScenarios(main) }
        try await snapshotWriteScenario(main)
        try await store.close()
    }

    /// P5's and P6's references: open each SQL peer's file and read every row (raw into structs,
    /// GRDB into each record), checked.
    func fetchAllReferences(into result: inout ScenarioResult) throws {
        let rawPath = try file(.raw)
        let rows = try measure(&result, .raw, objects: articles.count) { try RawDatabase(path: rawPath).fetchAll() }
        try expect(rows.count == articles.count && rows == data.articles, "raw fetch-all returns the data set")
        try fetchAllGRDB(GRDBArticle.self, into: &result)
        try fetchAllGRDB(GRDBHandWrittenArticle.self, into: &result)
    }

    private func fetchAllGRDB<Record: GRDBRecord>(_ type: Record.Type, into result: inout ScenarioResult) throws {
        let path = try file(Record.peer)
        let records = try measure(&result, Record.peer, objects: articles.count) { try GRDBPeer.openAndFetchAll(type, path) }
        try expect(records.count == articles.count && records.first?.id == data.articles.first?.id,
                   "\(Record.peer.label) fetch-all returns the data set")
    }

    // MARK: P9 — snapshot write

    private func snapshotWriteScenario(_ main: MainContext) async throws {
        var result = ScenarioResult(id: "P9", title: "write the snapshot (encode, LZ4, fsync, rename)",
                                    target: "≤ 1.5× hand-rolled", [.ratio(.raw, 1.5)])
        let directory = try freshDirectory("snapshot")
        let path = directory + "/articles.snapshot"
        let rows = try RawDatabase(path: try file(.raw)).fetchAll()
        var handRolled: HandRolledSnapshot.Written?
        var summary: SnapshotSummary?
        let repetitions = wants("P9") ? options.repetitions : 1
        for _ in 0..<repetitions {
            handRolled = try measure(&result, .raw, objects: rows.count) {
                try HandRolledSnapshot.write(rows, to: directory + "/hand-rolled.bin")
            }
            summary = try await measure(&result, .strata, objects: rows.count) { try await main.writeSnapshot(to: path) }
        }
        guard let summary, let handRolled else { return }
        snapshotPath = path
        snapshotUncompressedBytes = summary.header.uncompressedBytes
        try expect(summary.header.objectCount == articles.count, "the snapshot holds every article")
        let mib = 1024.0 * 1024.0
        result.details["strata uncompressed MiB"] = Double(summary.header.uncompressedBytes) / mib
        result.details["strata file MiB"] = Double(summary.fileSize) / mib
        result.details["hand-rolled uncompressed MiB"] = Double(handRolled.uncompressedBytes) / mib
        result.details["hand-rolled file MiB"] = Double(handRolled.compressedBytes) / mib
        result.notes.append("the raw column is the hand-rolled writer (single-threaded; Strata compresses chunks on every core)")
        if wants("P9") { record(result) }
    }
}
