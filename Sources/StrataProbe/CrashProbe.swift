import Foundation
@_spi(Testing) import Strata

/// One object of an acknowledged batch. A batch is one change set of `CrashItem.perBatch`
/// objects: after a crash, a batch is either whole or absent.
struct CrashItem: Entity, Equatable {
    var id: String
    var batch: Int
    var index: Int
    var payload: String

    static let isResident = true
    static let perBatch = 25
    static let indexes = [EntityIndex(["batch"])]

    init(batch: Int, index: Int) {
        id = "b\(batch)-\(index)"
        self.batch = batch
        self.index = index
        payload = String(repeating: "payload \(batch)/\(index) ", count: 8)
    }
}

/// `import-loop DB SNAPSHOT normal|full`: saves batch after batch, printing `ack N` once batch N
/// is persisted, and writes a snapshot every few batches (`snapshot N`). Runs until killed.
func runImportLoop(arguments: [String]) async -> Int32 {
    guard arguments.count == 3 else { return 2 }
    var configuration = StoreConfiguration()
    configuration.synchronous = arguments[2] == "full" ? .full : .normal
    do {
        let store = try await Store.open(at: arguments[0], entities: [CrashItem.self], configuration: configuration)
        let main = await store.mainContext
        try await main.loadResidentEntities()
        let last = try await store.fetch(Query<CrashItem>(sortedBy: [Attribute("batch").descending], limit: 1)).first
        var batch = (last?.batch ?? -1) + 1
        while true {
            var changes = ChangeSet()
            for index in 0..<CrashItem.perBatch { changes.insert(CrashItem(batch: batch, index: index)) }
            try store.submit(changes)
            try await store.persist()
            probeEmit("ack \(batch)")
            if batch % 3 == 2 {
                try await main.writeSnapshot(to: arguments[1])
                probeEmit("snapshot \(batch)")
            }
            batch += 1
        }
    } catch {
        probeEmit("error \(error)")
        return 1
    }
}

/// `snapshot-crash DB SNAPSHOT STEP`: saves one more batch, then writes a snapshot and kills
/// itself right after STEP (`temporaryWritten`, `temporarySynced`, `renamed`, or `complete`).
func runSnapshotCrash(arguments: [String]) async -> Int32 {
    guard arguments.count == 3 else { return 2 }
    do {
        let store = try await Store.open(at: arguments[0], entities: [CrashItem.self])
        let main = await store.mainContext
        try await main.loadResidentEntities()
        let last = try await store.fetch(Query<CrashItem>(sortedBy: [Attribute("batch").descending], limit: 1)).first
        var changes = ChangeSet()
        for index in 0..<CrashItem.perBatch { changes.insert(CrashItem(batch: (last?.batch ?? -1) + 1, index: index)) }
        try store.submit(changes)
        try await store.persist()
        let step = SnapshotWriteStep(rawValue: arguments[2])
        _ = try await main.writeSnapshot(to: arguments[1], stopAfter: step)
        probeEmit("stopped after \(arguments[2])")
        kill(getpid(), SIGKILL)
        return 0
    } catch {
        probeEmit("error \(error)")
        return 1
    }
}
