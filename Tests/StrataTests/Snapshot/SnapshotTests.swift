import Foundation
@_spi(Testing) @testable import Strata
import StrataTestSupport
import Testing

/// Every supported attribute type, resident so that snapshots archive it whole.
struct ArchivedKitchenSink: Entity, Equatable {
    enum Mood: String, Codable, CaseIterable { case calm, busy }
    enum Level: Int, Codable, CaseIterable { case low = 1, high = 9 }
    struct Nested: Codable, Equatable { var tags: [String]; var weights: [String: Double] }

    var id: UUID
    var flag: Bool
    var int: Int, int8: Int8, int16: Int16, int32: Int32, int64: Int64
    var uint: UInt, uint8: UInt8, uint16: UInt16, uint32: UInt32, uint64: UInt64
    var double: Double, float: Float
    var string: String
    var date: Date
    var uuid: UUID
    var data: Data
    var url: URL
    var decimal: Decimal
    var mood: Mood, level: Level
    var nested: Nested
    var optionalString: String?, optionalDate: Date?, optionalData: Data?, optionalMood: Mood?

    static let isResident = true

    static func make(_ index: Int) -> ArchivedKitchenSink {
        ArchivedKitchenSink(
            id: UUID(), flag: index % 2 == 0, int: -index, int8: .min, int16: .max, int32: Int32(index), int64: .max - Int64(index),
            uint: UInt(index), uint8: .max, uint16: 7, uint32: .max, uint64: UInt64(Int64.max), double: -0.0 + Double(index) / 3,
            float: 1.5, string: "snö ☃︎ \"quoted\" \(index)", date: Date(timeIntervalSinceReferenceDate: 123.456_789 * Double(index)),
            uuid: UUID(), data: Data((0..<index % 7).map { UInt8($0) }), url: URL(string: "https://example.com/a?b=\(index)")!,
            decimal: Decimal(string: "12.34\(index)")!, mood: index % 2 == 0 ? .calm : .busy, level: .high,
            nested: Nested(tags: ["a", "b\(index)"], weights: ["w": Double(index)]),
            optionalString: index % 3 == 0 ? nil : "s\(index)", optionalDate: index % 2 == 0 ? nil : Date(timeIntervalSince1970: 0),
            optionalData: index % 2 == 0 ? Data() : nil, optionalMood: index % 4 == 0 ? nil : .busy)
    }
}

struct ArchivedTag: Entity, Equatable {
    var id: Int64
    var name: String
    static let isResident = true
}

@MainActor
@Suite struct SnapshotTests {
    static let entities: [any Entity.Type] = [ResidentArticle.self, ArchivedTag.self, ArchivedKitchenSink.self, Article.self]

    private func seed(_ path: String, articles: Int = 2_000) async throws -> Store {
        let store = try await Store.open(at: path, entities: Self.entities)
        var changes = ChangeSet()
        for index in 0..<articles { changes.insert(ResidentArticle(index, read: index % 3 == 0)) }
        for index in 0..<20 { changes.insert(ArchivedTag(id: Int64(index), name: "tag \(index)")) }
        for index in 0..<50 { changes.insert(ArchivedKitchenSink.make(index)) }
        try store.submit(changes)
        try await store.persist()
        return store
    }

    private func snapshot(_ store: Store, to path: String) async throws -> SnapshotSummary {
        let main = store.mainContext
        try await main.loadResidentEntities()
        return try await main.writeSnapshot(to: path)
    }

    @Test func everySupportedTypeRoundTripsAndWarmEqualsCold() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        let expectedSinks: [ArchivedKitchenSink]
        do {
            let store = try await seed(db)
            let summary = try await snapshot(store, to: file)
            #expect(summary.header.objectCount == 2_000 + 20 + 50)
            #expect(summary.compressionRatio > 1)
            expectedSinks = try await store.fetch(Query<ArchivedKitchenSink>())
            try await store.close()
        }
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        #expect(warm.outcome == .used)
        let warmSinks = warm.mainContext.objects(ArchivedKitchenSink.self)
        #expect(warmSinks == expectedSinks)

        let cold = try await Store.openWarm(at: db, snapshot: directory.path("none.snapshot"), entities: Self.entities)
        #expect(cold.outcome.rejection == .missing)
        #expect(cold.mainContext.objects(ResidentArticle.self) == warm.mainContext.objects(ResidentArticle.self))
        #expect(cold.mainContext.objects(ArchivedTag.self) == warm.mainContext.objects(ArchivedTag.self))
        #expect(cold.mainContext.objects(ArchivedKitchenSink.self) == warmSinks)
        #expect(warm.mainContext.objects(ResidentArticle.self).count == 2_000)
        // Indexed queries work on the warm-loaded graph.
        let unread = try warm.mainContext.objects(matching: Query<ResidentArticle>(where: Attribute("feedID") == 4 && Attribute("isRead") == false))
        #expect(unread.count == 200 - 200 / 3 - (200 % 3 > 0 ? 0 : 0) || unread.allSatisfy { $0.feedID == 4 && !$0.isRead })
        #expect(unread.count == cold.mainContext.objects(ResidentArticle.self).filter { $0.feedID == 4 && !$0.isRead }.count)
        try await cold.store.close()
        try await warm.store.close()
    }

    @Test func databaseAheadThroughStrataAndRawSQLIsCaughtUp() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        do {
            let store = try await seed(db)
            _ = try await snapshot(store, to: file)
            // Ahead through Strata: updates, inserts, deletes, a bulk update.
            var changes = ChangeSet()
            changes.update(ResidentArticle(5, read: true))
            changes.insert(ResidentArticle(9_000))
            changes.delete(ResidentArticle.self, id: "r-7")
            changes.updateAll(ResidentArticle.self, ids: ["r-10", "r-11"], set: ["isStarred": true])
            try store.submit(changes)
            // An object inserted and then deleted: its last operation counts.
            var later = ChangeSet()
            later.insert(ResidentArticle(9_001))
            try store.submit(later)
            try store.deleteAll(ResidentArticle.self, ids: ["r-9001"])
            try await store.persist()
            // Ahead through raw SQL, as another process or the sqlite3 shell would write.
            try await store.write { db in
                try db.execute("UPDATE ResidentArticle SET title = 'edited outside' WHERE id = 'r-20'")
                try db.execute("DELETE FROM ArchivedTag WHERE id = 3")
                try db.execute("INSERT INTO ArchivedTag (id, name) VALUES (99, 'raw')")
            }
            try await store.close()
        }
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        guard case .caughtUp(let changes) = warm.outcome else {
            Issue.record("expected a catch-up, got \(warm.outcome)")
            try await warm.store.close()
            return
        }
        #expect(changes >= 8)
        let main = warm.mainContext
        #expect(main.object(ResidentArticle.self, id: "r-5")?.isRead == true)
        #expect(main.object(ResidentArticle.self, id: "r-9000") != nil)
        #expect(main.object(ResidentArticle.self, id: "r-9001") == nil)
        #expect(main.object(ResidentArticle.self, id: "r-7") == nil)
        #expect(main.object(ResidentArticle.self, id: "r-10")?.isStarred == true)
        #expect(main.object(ResidentArticle.self, id: "r-20")?.title == "edited outside")
        #expect(main.object(ArchivedTag.self, id: 3) == nil)
        #expect(main.object(ArchivedTag.self, id: 99)?.name == "raw")
        // The caught-up graph equals a cold load.
        let cold = try await Store.openWarm(at: db, snapshot: directory.path("none"), entities: Self.entities)
        #expect(main.objects(ResidentArticle.self) == cold.mainContext.objects(ResidentArticle.self))
        #expect(main.objects(ArchivedTag.self) == cold.mainContext.objects(ArchivedTag.self))
        try await cold.store.close()
        try await warm.store.close()
    }

    /// Every way a snapshot can be wrong falls back to a cold start with the right outcome, and
    /// the main context then equals a cold load.
    @Test func badSnapshotsFallBackToColdStart() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        let good: Data
        do {
            let store = try await seed(db, articles: 30_000)
            _ = try await snapshot(store, to: file)
            good = try Data(contentsOf: URL(fileURLWithPath: file))
            try await store.close()
        }
        let header = try Snapshot.readHeader(at: file)
        #expect(header.entities.first { $0.entity == "ResidentArticle" }!.chunks.count >= 2)
        let reference = try await Store.openWarm(at: db, snapshot: directory.path("none"), entities: Self.entities)
        let coldArticles = reference.mainContext.objects(ResidentArticle.self)

        func expectColdStart(_ bytes: Data, _ expected: SnapshotRejection?, _ label: String) async throws {
            let candidate = directory.path("candidate-\(UUID().uuidString).snapshot")
            try bytes.write(to: URL(fileURLWithPath: candidate))
            let warm = try await Store.openWarm(at: db, snapshot: candidate, entities: Self.entities)
            guard let rejection = warm.outcome.rejection else {
                // Any changed byte is refused: the header by its CRC-32, a frame by its XXH64.
                Issue.record("\(label): the snapshot was used (\(warm.outcome))")
                try await warm.store.close()
                return
            }
            if let expected { #expect(rejection == expected, "\(label)") }
            #expect(warm.mainContext.objects(ResidentArticle.self) == coldArticles, "\(label): not a full cold load")
            try await warm.store.close()
        }

        try await expectColdStart(Data(), .empty, "empty file")
        var wrongMagic = good
        wrongMagic[0] = UInt8(ascii: "X")
        try await expectColdStart(wrongMagic, .badMagic, "wrong magic")
        var wrongVersion = good
        wrongVersion[8] = 9
        try await expectColdStart(wrongVersion, .unsupportedFormat(9), "format version")
        // Truncated at offsets across the header and the payload (including mid-frame).
        let payloadStart = header.entities.flatMap(\.chunks).map(\.offset).min()!
        for offset in [1, 7, 12, 20, payloadStart - 1, payloadStart + 3, payloadStart + 1_000, good.count / 2, good.count - 5, good.count - 1] {
            try await expectColdStart(good.prefix(offset), nil, "truncated at \(offset)")
        }
        // Bit flips across header and payload.
        for offset in [9, 17, 40, payloadStart - 2, payloadStart + 10, good.count / 3, good.count / 2, good.count - 3] {
            var flipped = good
            flipped[offset] ^= 0x10
            // Header flips fail its CRC-32 (or its version), payload flips their frame's XXH64.
            try await expectColdStart(flipped, offset >= payloadStart ? .checksumMismatch : nil, "bit flip at \(offset)")
        }
        try await reference.store.close()
    }

    @Test func foreignStaleAndNewerSnapshotsAreRejected() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        let other = directory.path("other.sqlite"), otherFile = directory.path("other.snapshot")
        do {
            let store = try await seed(db)
            _ = try await snapshot(store, to: file)
            let otherStore = try await seed(other, articles: 10)
            _ = try await snapshot(otherStore, to: otherFile)
            try await otherStore.close()
            try await store.close()
        }
        let foreign = try await Store.openWarm(at: db, snapshot: otherFile, entities: Self.entities)
        #expect(foreign.outcome.rejection == .otherStore)
        try await foreign.store.close()

        // Another schema: the same store opened with one entity fewer.
        let fewer: [any Entity.Type] = [ResidentArticle.self, ArchivedTag.self, Article.self]
        let otherSchema = try await Store.openWarm(at: db, snapshot: file, entities: fewer)
        #expect(otherSchema.outcome.rejection == .schemaChanged)
        try await otherSchema.store.close()

        // Newer than the database: a snapshot taken later, used against an older copy of the file.
        let backup = directory.path("backup.sqlite")
        do {
            let store = try await Store.open(at: db, entities: Self.entities)
            _ = try await store.checkpoint(.truncate)
            try FileManager.default.copyItem(atPath: db, toPath: backup)
            var changes = ChangeSet()
            changes.insert(ArchivedTag(id: 500, name: "later"))
            try store.submit(changes)
            try await store.persist()
            _ = try await snapshot(store, to: file)
            try await store.close()
        }
        let older = try await Store.openWarm(at: backup, snapshot: file, entities: Self.entities)
        #expect(older.outcome.rejection == .newerThanDatabase)
        try await older.store.close()

        // The change log pruned past the snapshot.
        do {
            var configuration = StoreConfiguration()
            configuration.changeLogLimit = 10
            let store = try await Store.open(at: db, entities: Self.entities, configuration: configuration)
            for round in 0..<3 {
                // One change set per object: each is one log entry (a change set's run is one).
                for index in 0..<20 {
                    var changes = ChangeSet()
                    changes.upsert(ArchivedTag(id: Int64(1_000 + index), name: "round \(round)"))
                    try store.submit(changes)
                }
                try await store.persist()
            }
        }
        let pruned = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        #expect(pruned.outcome.rejection == .historyPruned)
        try await pruned.store.close()
    }

    @Test(arguments: [SnapshotWriteStep.temporaryWritten, .temporarySynced])
    func crashBeforeRenameKeepsThePreviousArchive(step: SnapshotWriteStep) async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        let store = try await seed(db)
        let main = store.mainContext
        try await main.loadResidentEntities()
        let first = try await main.writeSnapshot(to: file)
        let before = try Data(contentsOf: URL(fileURLWithPath: file))

        var changes = ChangeSet()
        changes.insert(ArchivedTag(id: 77, name: "after the first snapshot"))
        try store.submit(changes)
        try await store.persist()
        _ = try await main.writeSnapshot(to: file, stopAfter: step)   // "crashes" before the rename

        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == before)
        #expect(try Snapshot.readHeader(at: file) == first.header)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.count == 1)   // the torn temporary file, which nothing reads
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        #expect(warm.outcome == .caughtUp(changes: 1))
        #expect(warm.mainContext.object(ArchivedTag.self, id: 77) != nil)
        try await warm.store.close()
        try await store.close()
    }

    /// A change set the main context merged but SQLite rejected never reaches an archive: the
    /// snapshot is refused while the failure is unknown to the context, or written after the
    /// context was corrected — in both cases without the phantom object.
    @Test(arguments: [false, true])
    func snapshotNeverContainsAChangeSetThatFailedToCommit(failureKnownFirst: Bool) async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("x.snapshot")
        let store = try await seed(db)
        let main = store.mainContext
        try await main.loadResidentEntities()
        var changes = ChangeSet()
        changes.insert(ArchivedTag(id: 4_242, name: "phantom"))
        changes.update(ArchivedTag(id: 4_243, name: "missing"))   // SQLite rejects the whole change set
        let submission = try store.submit(changes)
        await main.mergeAccepted()
        #expect(main.object(ArchivedTag.self, id: 4_242) != nil)
        if failureKnownFirst {
            await #expect(throws: StrataError.self) { try await submission.committed() }
        }
        do {
            try await main.writeSnapshot(to: file)
        } catch let error as StrataError {
            #expect(!failureKnownFirst, "refused although the context had been corrected")
            #expect(error.code == .invalidSnapshot)
            #expect(!FileManager.default.fileExists(atPath: file))
            try await closeReportingTheFailedChangeSet(store)
            return
        }
        #expect(main.object(ArchivedTag.self, id: 4_242) == nil)
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        #expect(warm.outcome == .used)
        #expect(warm.mainContext.object(ArchivedTag.self, id: 4_242) == nil)
        try await warm.store.close()
        try await closeReportingTheFailedChangeSet(store)
    }

    /// Closes `store`, whose rejected change set nobody may have awaited: `close()` then reports
    /// that failure (and closes all the same). Any other failure to close still fails the test.
    private func closeReportingTheFailedChangeSet(_ store: Store) async throws {
        do {
            try await store.close()
        } catch let error as StrataError where error.code == .objectNotFound {}
    }

    @Test func anEntityArchiveVersionChangeIsRefusedClearly() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        do {
            let store = try await Store.open(at: db, entities: [VersionedV1.self])
            var changes = ChangeSet()
            changes.insert(VersionedV1(id: 1, name: "one"))
            try store.submit(changes)
            try await store.persist()
            _ = try await snapshot(store, to: file)
            try await store.close()
        }
        let unchanged = try await Store.openWarm(at: db, snapshot: file, entities: [VersionedV1.self])
        #expect(unchanged.outcome == .used)
        try await unchanged.store.close()
        let bumped = try await Store.openWarm(at: db, snapshot: file, entities: [VersionedV2.self])
        #expect(bumped.outcome.rejection == .schemaChanged)
        #expect(bumped.mainContext.objects(VersionedV2.self).map(\.name) == ["one"])
        try await bumped.store.close()
    }

    @Test func handWrittenDecodingBuildsValuesWhenReadAndAgreesWithDecodable() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        let objects = (0..<500).map { HandDecoded(id: "h\($0)", count: $0, note: $0 % 2 == 0 ? nil : "n\($0)",
                                                  when: Date(timeIntervalSinceReferenceDate: Double($0) / 7)) }
        do {
            let store = try await Store.open(at: db, entities: [HandDecoded.self])
            var changes = ChangeSet()
            objects.forEach { changes.insert($0) }
            try store.submit(changes)
            try await store.persist()
            _ = try await snapshot(store, to: file)
            try await store.close()
        }
        let before = HandDecoded.decoded.withLock { $0 }
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: [HandDecoded.self])
        #expect(warm.outcome == .used)
        // Values are built when read, not when the archive is loaded: none yet, then one per
        // object read, each by the hand-written init(row:).
        #expect(HandDecoded.decoded.withLock { $0 } - before == 0)
        #expect(warm.mainContext.objects(HandDecoded.self) == objects.sorted { $0.id < $1.id })
        #expect(HandDecoded.decoded.withLock { $0 } - before == objects.count)
        try await warm.store.close()
    }

    @Test func snapshotsAreWrittenAutomaticallyAfterEnoughChanges() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("auto.snapshot")
        let store = try await Store.open(at: db, entities: [ArchivedTag.self])
        let main = store.mainContext
        let written: SnapshotSummary = try await withCheckedThrowingContinuation { continuation in
            var resumed = false
            let observation = main.writeSnapshotsAutomatically(to: file, afterChanges: 20) { result in
                guard !resumed else { return }
                resumed = true
                continuation.resume(with: result)
            }
            Task { @MainActor in
                defer { _ = observation }
                for batch in 0..<2 {
                    var changes = ChangeSet()
                    for index in 0..<10 { changes.insert(ArchivedTag(id: Int64(batch * 10 + index), name: "t")) }
                    _ = try? store.submit(changes)
                    await main.mergeAccepted()
                }
            }
        }
        #expect(written.header.objectCount == 20)
        #expect(try Snapshot.readHeader(at: file) == written.header)
        try await store.close()
    }
}

/// One entity, two archive versions (same name, table and attributes).
struct VersionedV1: Entity {
    var id: Int64
    var name: String
    static let entityName = "Versioned"
    static let isResident = true
}

struct VersionedV2: Entity {
    var id: Int64
    var name: String
    static let entityName = "Versioned"
    static let isResident = true
    static let archiveVersion = 2
}

/// Decodes itself by hand (its row codec), counting how often.
struct HandDecoded: Entity, Equatable {
    var id: String
    var count: Int
    var note: String?
    var when: Date
    static let isResident = true
    static let decoded = Locked(0)

    init(id: String, count: Int, note: String?, when: Date) {
        self.id = id
        self.count = count
        self.note = note
        self.when = when
    }

    init(row: inout RowReader) throws {
        id = try row.read()
        count = try row.read()
        note = try row.read()
        when = try row.read()
        Self.decoded.withLock { $0 += 1 }
    }
}
