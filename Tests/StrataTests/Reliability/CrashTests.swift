import Foundation
@_spi(Testing) @testable import Strata
import StrataTestSupport
import Testing

/// Must match `CrashItem` in Sources/StrataProbe/CrashProbe.swift (same name, table, attributes).
struct CrashItem: Entity, Equatable {
    var id: String
    var batch: Int
    var index: Int
    var payload: String

    static let isResident = true
    static let perBatch = 25
    static let indexes = [EntityIndex(["batch"])]
}

/// Kill loops: a child process saves batch after batch and acknowledges each persisted one on an
/// unbuffered pipe; the parent SIGKILLs it at random moments, then checks that nothing
/// acknowledged was lost, no batch is partial, the file is sound, and the snapshot is either
/// valid or rejected.
@MainActor
@Suite(.serialized) struct CrashTests {
    static let rounds = 20

    @Test(.hangWatchdog, arguments: ["normal", "full"])
    func killedAtRandomMomentsLosesNothingAcknowledged(mode: String) async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("crash.sqlite"), snapshot = directory.path("crash.snapshot")
        var (random, seed) = SeededRandom.forTest("killedAtRandomMomentsLosesNothingAcknowledged(\(mode))")
        var acknowledged: Set<Int> = []
        var outcomes: [String: Int] = [:]
        for round in 0..<Self.rounds {
            let run = try ProbeRun(["import-loop", db, snapshot, mode])
            let waitFor = Int.random(in: 1...6, using: &random)
            let acks = await run.lines(withPrefix: "ack ", count: waitFor)
            // A random extra moment, so the kill lands anywhere in a save, a commit or a snapshot.
            try await Task.sleep(nanoseconds: UInt64.random(in: 0..<20_000_000, using: &random))
            await run.killed()
            let errors = run.allLines.filter { $0.hasPrefix("error") }
            #expect(errors.isEmpty, "round \(round) (seed \(seed)): the probe failed: \(errors)")
            for line in run.allLines where line.hasPrefix("ack ") { acknowledged.insert(Int(line.dropFirst(4))!) }
            #expect(!acks.isEmpty, "round \(round) (seed \(seed)): the probe acknowledged nothing")

            let store = try await Store.open(at: db, entities: [CrashItem.self])
            #expect(try await store.integrityProblems().isEmpty, "round \(round): integrity check failed")
            let items = try await store.fetch(Query<CrashItem>())
            let batches = Dictionary(grouping: items, by: \.batch)
            for (batch, members) in batches {
                #expect(members.count == CrashItem.perBatch, "round \(round): batch \(batch) is partial (\(members.count))")
            }
            let missing = acknowledged.subtracting(batches.keys)
            #expect(missing.isEmpty, "round \(round): acknowledged batches lost: \(missing.sorted())")

            if FileManager.default.fileExists(atPath: snapshot) {
                let warm = try await Store.openWarm(at: db, snapshot: snapshot, entities: [CrashItem.self])
                outcomes["\(warm.outcome)".components(separatedBy: " (").first!, default: 0] += 1
                #expect(warm.mainContext.objects(CrashItem.self) == items.sorted { $0.id < $1.id },
                        "round \(round): the warm start shows something other than the database")
                try await warm.store.close()
            }
            try await store.close()
        }
        print("crash loop \(mode): \(Self.rounds) kills, \(acknowledged.count) acknowledged saves, 0 lost; snapshot outcomes \(outcomes)")
    }

    /// A kill after each step of the atomic snapshot write never leaves a warm start older than
    /// the database (or a torn file).
    @Test(.hangWatchdog, arguments: ["temporaryWritten", "temporarySynced", "renamed", "complete"])
    func killedWhileWritingASnapshot(step: String) async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("crash.sqlite"), snapshot = directory.path("crash.snapshot")
        do {
            let store = try await Store.open(at: db, entities: [CrashItem.self])
            var changes = ChangeSet()
            for index in 0..<CrashItem.perBatch {
                changes.insert(CrashItem(id: "b0-\(index)", batch: 0, index: index, payload: "first"))
            }
            try store.submit(changes)
            try await store.persist()
            let main = store.mainContext
            try await main.loadResidentEntities()
            try await main.writeSnapshot(to: snapshot)
            try await store.close()
        }
        let run = try ProbeRun(["snapshot-crash", db, snapshot, step])
        _ = await run.exited()
        #expect(run.allLines.contains("stopped after \(step)"), "the probe did not reach \(step): \(run.allLines)")

        let warm = try await Store.openWarm(at: db, snapshot: snapshot, entities: [CrashItem.self])
        let stored = try await warm.store.fetch(Query<CrashItem>())
        #expect(stored.count == 2 * CrashItem.perBatch)
        #expect(warm.mainContext.objects(CrashItem.self) == stored, "warm start older than the database after \(step)")
        switch step {
        case "renamed", "complete": #expect(warm.outcome == .used)
        default: #expect(warm.outcome == .caughtUp(changes: CrashItem.perBatch))
        }
        try await warm.store.close()
    }

    /// Another process committing batch after batch into a file this process has open, killed at
    /// random moments: the main context is told only of whole batches (each is one transaction),
    /// live and after the kill, and ends holding exactly what the file holds.
    @Test(.hangWatchdog)
    func aWriterKilledMidTransactionShowsNothingPartial() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("shared.sqlite"), snapshot = directory.path("shared.snapshot")
        var (random, seed) = SeededRandom.forTest(#function)
        let store = try await Store.open(at: db, entities: [CrashItem.self])
        let main = store.mainContext
        var partial: [String] = []
        var remote = 0
        let observation = main.onChange { change in
            if change.origin == .remote { remote += 1 }
            for (batch, members) in Dictionary(grouping: change.inserted(CrashItem.self), by: { $0.split(separator: "-")[0] })
            where members.count != CrashItem.perBatch {
                partial.append("\(batch): \(members.count) of \(CrashItem.perBatch) told (\(change.origin))")
            }
        }
        defer { observation.cancel() }
        for round in 0..<5 {
            let run = try ProbeRun(["import-loop", db, snapshot, "normal"])
            _ = await run.lines(withPrefix: "ack ", count: Int.random(in: 1...4, using: &random))
            try await Task.sleep(nanoseconds: UInt64.random(in: 0..<20_000_000, using: &random))   // a random moment
            await run.killed()
            // A fetch takes in whatever the killed writer committed, as the watcher would.
            let stored = try await store.fetch(Query<CrashItem>())
            #expect(main.objects(CrashItem.self) == stored.sorted { $0.id < $1.id }, "round \(round) (seed \(seed))")
            for (batch, members) in Dictionary(grouping: stored, by: \.batch) where members.count != CrashItem.perBatch {
                Issue.record("round \(round) (seed \(seed)): batch \(batch) is partial in the file (\(members.count))")
            }
        }
        print("5 kills: \(main.registeredCount(CrashItem.self) / CrashItem.perBatch) whole batches, \(remote) remote changes")
        #expect(partial.isEmpty, "seed \(seed): partial batches told to the main context: \(partial)")
        #expect(main.registeredCount(CrashItem.self) >= CrashItem.perBatch, "seed \(seed): the writer committed nothing")
        try await store.close()
    }
}
