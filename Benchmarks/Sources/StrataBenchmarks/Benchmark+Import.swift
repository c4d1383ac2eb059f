import Foundation
import GRDB
import Strata

/// P1 (import), P2 (worker save) and the data files every read scenario uses.
extension Benchmark {
    // MARK: P1 — import

    func importScenario() async throws {
        var result = ScenarioResult(id: "P1", title: "import \(articles.count) via 10 worker saves, until persisted",
                                    target: "≤ 1.5× raw; ≤ 0.5× GRDB record.insert", [.ratio(.raw, 1.5), .fasterGRDB(0.5)])
        for repetition in 0..<options.repetitions {
            var kept: [Peer: String] = [:]
            let rawDirectory = try freshDirectory("p1-raw-\(repetition)")
            do {
                let database = try RawDatabase(path: rawDirectory + "/raw.sqlite")
                try database.execute(RawDatabase.schemaSQL())
                try measure(&result, .raw, objects: articles.count) { try database.insertAll(data.articles) }
                try expect(try database.count("SELECT count(*) FROM articles") == articles.count, "raw import count")
                kept[.raw] = rawDirectory + "/raw.sqlite"
            }
            kept[.grdb] = try importGRDB(records, repetition: repetition, into: &result)
            kept[.grdbHandWritten] = try importGRDB(handWrittenRecords, repetition: repetition, into: &result)

            let strataDirectory = try freshDirectory("p1-strata-\(repetition)")
            do {
                let store = try await StrataPeer.open(strataDirectory + "/strata.sqlite")
                try await measure(&result, .strata, objects: articles.count) {
                    _ = try await StrataPeer.importThroughWorker(batches, into: store)
                }
                try expect(try await store.count(Query<Article>()) == articles.count, "Strata import count")
                try await store.close()
                kept[.strata] = strataDirectory + "/strata.sqlite"
            }
            log("P1 repetition \(repetition + 1): raw \(format(result, .raw)), GRDB Codable \(format(result, .grdb)), "
                + "GRDB hand-written \(format(result, .grdbHandWritten)), Strata \(format(result, .strata))")
            // Keep the last repetition's files for the read scenarios; drop the others.
            for path in files.values { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
            files = kept
        }
        result.notes.append("no main context open (its merges are P3/P4's subject)")
        record(result)
    }

    /// P1 for one GRDB record: a fresh file, `record.insert` for every article; returns the file.
    private func importGRDB<Record: GRDBRecord>(_ records: [Record], repetition: Int,
                                               into result: inout ScenarioResult) throws -> String {
        let path = try freshDirectory("p1-\(Record.peer.rawValue)-\(repetition)") + "/grdb.sqlite"
        let pool = try GRDBPeer.open(path, create: true)
        try measure(&result, Record.peer, objects: records.count) { try GRDBPeer.insertAll(records, into: pool) }
        try expect(try GRDBPeer.count(pool) == records.count, "\(Record.peer.label) import count")
        return path
    }

    /// The data files, made untimed when P1 did not run.
    func ensureFiles() async throws {
        guard files.isEmpty else { return }
        log("setting up the data files (untimed)")
        let rawPath = try freshDirectory("data-raw") + "/raw.sqlite"
        let database = try RawDatabase(path: rawPath)
        try database.execute(RawDatabase.schemaSQL())
        try database.insertAll(data.articles)
        files[.raw] = rawPath
        let grdbPath = try freshDirectory("data-grdb") + "/grdb.sqlite"
        try GRDBPeer.insertAll(records, into: try GRDBPeer.open(grdbPath, create: true))
        files[.grdb] = grdbPath
        let handWrittenPath = try freshDirectory("data-grdbHandWritten") + "/grdb.sqlite"
        try GRDBPeer.insertAll(handWrittenRecords, into: try GRDBPeer.open(handWrittenPath, create: true))
        files[.grdbHandWritten] = handWrittenPath
        let strataPath = try freshDirectory("data-strata") + "/strata.sqlite"
        let store = try await StrataPeer.open(strataPath)
        try await StrataPeer.importThroughWorker(batches, into: store)
        try await store.close()
        files[.strata] = strataPath
    }

    // MARK: P2 — worker save

    func workerSaveScenario() async throws {
        let batch = batches[0]
        let grdbBatch = Array(records[0..<batch.count])
        var result = ScenarioResult(id: "P2", title: "worker save() of \(batch.count) changes returns",
                                    target: "≤ 0.1× GRDB writing the same", [.fasterGRDB(0.1)])
        var persistTimes: [Double] = [], nextCallTimes: [Double] = []
        for repetition in 0..<options.repetitions {
            let grdbDirectory = try freshDirectory("p2-grdb-\(repetition)")
            do {
                let pool = try GRDBPeer.open(grdbDirectory + "/grdb.sqlite", create: true)
                try measure(&result, .grdb, objects: batch.count) { try GRDBPeer.insertAll(grdbBatch, into: pool) }
            }
            let strataDirectory = try freshDirectory("p2-strata-\(repetition)")
            let store = try await StrataPeer.open(strataDirectory + "/strata.sqlite")
            let start = ContinuousClock.now
            let (save, nextCall) = try await StrataPeer.timeWorkerSave(batch, into: store)
            result.add(.strata, save)
            nextCallTimes.append(nextCall.milliseconds)
            try await store.persist()
            persistTimes.append((ContinuousClock.now - start).milliseconds)
            try expect(try await store.count(Query<Article>()) == batch.count, "Strata P2 count")
            try await store.close()
            try? FileManager.default.removeItem(atPath: grdbDirectory)
            try? FileManager.default.removeItem(atPath: strataDirectory)
        }
        result.details["strata insert+save+persist ms"] = Statistics(persistTimes)?.median
        // save() hands the change set over; the worker's own copies take it at its next call.
        result.details["strata worker's next call (applies the save to its copies) ms"] = Statistics(nextCallTimes)?.median
        result.notes.append("GRDB: the Codable record only")
        record(result)
    }
}
