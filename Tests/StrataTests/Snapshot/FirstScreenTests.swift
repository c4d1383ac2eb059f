import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// An article list archived newest first (``Entity/snapshotOrder``).
struct ListedArticle: Entity, Equatable {
    var id: String
    var feedID: Int64
    var published: Date
    var isRead: Bool

    static let isResident = true
    static let snapshotOrder = [Attribute("published").descending]
}

/// The same table archived in another order: what an app that changed its order opens.
struct ListedArticleByFeed: Entity, Equatable {
    var id: String
    var feedID: Int64
    var published: Date
    var isRead: Bool

    static let entityName = "ListedArticle"
    static let isResident = true
    static let snapshotOrder = [Attribute("feedID").ascending]
}

/// A warm start shows a first screen from the archive's first chunk only when that chunk alone
/// decides it and the archive is current; otherwise from the filled main context. Either way the
/// screen is shown once and equals what the main context (and SQL) answers.
@MainActor
@Suite struct FirstScreenTests {
    /// More articles than a first chunk holds, so that the archive has later chunks.
    static let count = SnapshotArchive.objectsInFirstChunk * 2 + 500

    /// Articles with random dates (many shared, so ties fall to the key), feeds and read flags.
    private func articles(_ random: inout SeededRandom) -> [ListedArticle] {
        (0..<Self.count).map { index in
            ListedArticle(id: "a-\(index)", feedID: Int64(random.next(20)),
                          published: Date(timeIntervalSinceReferenceDate: Double(random.next(1_500))),
                          isRead: random.next(10) < 3)
        }
    }

    /// A store holding `articles`, persisted, and its snapshot written.
    private func fill(_ db: String, _ file: String, _ articles: [ListedArticle]) async throws {
        let store = try await Store.open(at: db, entities: [ListedArticle.self])
        var changes = ChangeSet()
        for article in articles { changes.insert(article) }
        try store.submit(changes)
        try await store.persist()
        let main = store.mainContext
        try await main.loadResidentEntities()
        try await main.writeSnapshot(to: file)
        try await store.close()
    }

    /// Opens warm with `query` as the first screen; returns the start and every screen shown.
    private func openWarm<E: Entity>(_ db: String, _ file: String, _ query: Query<E>,
                                     entities: [any Entity.Type] = [ListedArticle.self])
        async throws -> (WarmStart, [QueryResults<E>]) {
        var shown: [QueryResults<E>] = []
        let start = try await Store.openWarm(at: db, snapshot: file, entities: entities, firstScreen: query) { shown.append($0) }
        return (start, shown)
    }

    /// The screen shown once, equal (IDs and values) to the main context's answer and SQL's.
    private func expectShownOnce(_ start: WarmStart, _ shown: [QueryResults<ListedArticle>],
                                 _ query: Query<ListedArticle>, seed: UInt64) async throws {
        #expect(shown.count == 1, "seed \(seed): shown \(shown.count) times")
        guard let screen = shown.first else { return }
        let fromContext = try start.mainContext.results(matching: query)
        let fromSQL = try await start.store.fetch(query)
        #expect(screen.ids == fromContext.ids, "seed \(seed): \(query.filter)")
        #expect(Array(screen) == fromSQL, "seed \(seed): \(query.filter)")
        #expect(!screen.isEmpty, "seed \(seed): an empty screen proves little")
    }

    /// First screens; made when a test runs, not kept in globals (LeakSanitizer cannot follow a
    /// filter's boxes through a global's enum payloads).
    enum Screen: String, CaseIterable, CustomTestStringConvertible {
        // The first chunk decides these.
        case newestUnread, newestWithOffset, newestOfAFeed
        // Another order (the first chunk holds the newest, not the oldest); more matches than the
        // first chunk holds; no limit (every match, in every chunk).
        case oldest, manyOfAFeed, everyRead

        static let decided: [Screen] = [.newestUnread, .newestWithOffset, .newestOfAFeed]
        static let undecided: [Screen] = [.oldest, .manyOfAFeed, .everyRead]
        var testDescription: String { rawValue }

        var query: Query<ListedArticle> {
            let newest = [Attribute("published").descending]
            switch self {
            case .newestUnread: return Query(where: Attribute("isRead") == false, sortedBy: newest, limit: 50)
            case .newestWithOffset: return Query(sortedBy: newest, limit: 20, offset: 30)
            case .newestOfAFeed: return Query(where: Attribute("feedID") == 3, sortedBy: newest, limit: 10)
            case .oldest: return Query(sortedBy: [Attribute("published").ascending], limit: 10)
            case .manyOfAFeed: return Query(where: Attribute("feedID") == 3, sortedBy: newest, limit: 500)
            case .everyRead: return Query(where: Attribute("isRead") == true, sortedBy: newest)
            }
        }
    }

    @Test(arguments: Screen.decided)
    func aQueryInTheArchiveOrderIsShownFromTheFirstChunk(_ screen: Screen) async throws {
        let query = screen.query
        var (random, seed) = SeededRandom.forTest("aQueryInTheArchiveOrderIsShownFromTheFirstChunk")
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        try await fill(db, file, articles(&random))
        let (start, shown) = try await openWarm(db, file, query)
        #expect(start.outcome == .used)
        #expect(start.showedFirstScreenEarly, "seed \(seed)")
        #expect(start.timeToFirstScreen != nil)
        try await expectShownOnce(start, shown, query, seed: seed)
        try await start.store.close()
    }

    @Test(arguments: Screen.undecided)
    func aQueryTheFirstChunkCannotDecideIsShownFromTheFilledContext(_ screen: Screen) async throws {
        let query = screen.query
        var (random, seed) = SeededRandom.forTest("aQueryTheFirstChunkCannotDecideIsShownFromTheFilledContext")
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        try await fill(db, file, articles(&random))
        let (start, shown) = try await openWarm(db, file, query)
        #expect(start.outcome == .used)
        #expect(!start.showedFirstScreenEarly, "seed \(seed)")
        try await expectShownOnce(start, shown, query, seed: seed)
        try await start.store.close()
    }

    @Test func anEntityWholeInItsFirstChunkAnswersAnyQueryEarly() async throws {
        var (random, seed) = SeededRandom.forTest("anEntityWholeInItsFirstChunkAnswersAnyQueryEarly")
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        try await fill(db, file, Array(articles(&random).prefix(300)))
        let query = Query<ListedArticle>(where: Attribute("isRead") == true, sortedBy: [Attribute("feedID").ascending])
        let (start, shown) = try await openWarm(db, file, query)
        #expect(start.showedFirstScreenEarly, "seed \(seed)")
        try await expectShownOnce(start, shown, query, seed: seed)
        try await start.store.close()
    }

    /// The archive's objects are in the entity's order, ties by key: the first chunk holds the
    /// first ones of that order.
    @Test func theArchiveKeepsTheEntityOrderAndTheFirstChunkIsTheFirstObjects() async throws {
        var (random, seed) = SeededRandom.forTest("theArchiveKeepsTheEntityOrderAndTheFirstChunkIsTheFirstObjects")
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        let all = articles(&random)
        try await fill(db, file, all)
        let expected = all.sorted { $0.published != $1.published ? $0.published > $1.published : $0.id < $1.id }
        let chunk = try SnapshotLoader(registry: SchemaRegistry([ListedArticle.self])).firstChunk(file, of: "ListedArticle").get()
        #expect(!chunk.isWholeSection)
        #expect(chunk.block.count == SnapshotArchive.objectsInFirstChunk)
        let keys = (0..<chunk.block.count).map { chunk.block.key(at: $0) }
        #expect(keys == expected.prefix(chunk.block.count).map { .text($0.id) }, "seed \(seed)")
        // Tools without the app's types read the order from the store's records.
        #expect(try StoreInspector(path: db).snapshotValidity(at: file) == .current)
        #expect(try StoreInspector(path: db).entities.first?.snapshotOrder == ListedArticle.snapshotOrder)
        let header = try Snapshot.readHeader(at: file)
        #expect(header.entities.first?.chunks.map(\.objectCount)
                == [SnapshotArchive.objectsInFirstChunk, Self.count - SnapshotArchive.objectsInFirstChunk])
    }

    /// The archive holds the saved copies as of the `writeSnapshot` call, although they are
    /// ordered and copied off the main actor: a change the main context saves and merges while
    /// the snapshot waits for its state to be committed is not in it (the next launch catches up).
    @Test func theArchiveIsTheStateAtTheCallEvenWhenTheContextChangesMeanwhile() async throws {
        var (random, seed) = SeededRandom.forTest("theArchiveIsTheStateAtTheCallEvenWhenTheContextChangesMeanwhile")
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        let all = articles(&random)
        let store = try await Store.open(at: db, entities: [ListedArticle.self])
        var changes = ChangeSet()
        for article in all { changes.insert(article) }
        try await store.submit(changes).committed()
        let main = store.mainContext
        try await main.loadResidentEntities()
        let newest = try #require(try main.objects(matching: Query<ListedArticle>(
            sortedBy: [Attribute("published").descending], limit: 1)).first)

        // Hold the store's queue so that the snapshot, once it has captured, waits.
        let gate = QueueGate()
        let holding = Task.detached { try await store.read { _ in _ = gate.hold() } }
        #expect(await waitOff(gate.entered))
        var pending = ChangeSet()
        var unread = all[1]
        unread.isRead.toggle()
        pending.update(unread)
        let submitted = try store.submit(pending)
        await main.mergeAccepted()
        let writing = Task { @MainActor in try await main.writeSnapshot(to: file) }
        while store.pipeline.withLock({ $0.waiters.isEmpty }) { await Task.yield() }
        // Captured: now the main context saves a change to the newest article and shows it.
        var changed = newest
        changed.isRead.toggle()
        try main.update(changed)
        try main.save()
        #expect(main.object(ListedArticle.self, id: newest.id)?.isRead == changed.isRead)
        gate.release()
        try await holding.value
        try await submitted.committed()
        _ = try await writing.value
        try await store.persist()
        try await store.close()

        let chunk = try SnapshotLoader(registry: SchemaRegistry([ListedArticle.self])).firstChunk(file, of: "ListedArticle").get()
        let isRead = try #require(chunk.block.schema.position(of: "isRead"))
        #expect(chunk.block.key(at: 0) == .text(newest.id), "seed \(seed)")
        #expect(chunk.block.value(at: 0, isRead) == .integer(newest.isRead ? 1 : 0), "seed \(seed): as of the call")
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: [ListedArticle.self])
        // Caught up: the archive claims no generation past what it holds.
        guard case .caughtUp = warm.outcome else {
            Issue.record("seed \(seed): expected a catch-up, got \(warm.outcome)")
            try await warm.store.close()
            return
        }
        #expect(warm.mainContext.object(ListedArticle.self, id: newest.id)?.isRead == changed.isRead)
        #expect(warm.mainContext.object(ListedArticle.self, id: unread.id)?.isRead == unread.isRead)
        try await warm.store.close()
    }

    /// A store ahead of the archive (here: an article of the first screen marked read since)
    /// shows the screen only once the main context has caught up.
    @Test func anArchiveBehindTheStoreShowsTheScreenOnlyAfterCatchingUp() async throws {
        var (random, seed) = SeededRandom.forTest("anArchiveBehindTheStoreShowsTheScreenOnlyAfterCatchingUp")
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        try await fill(db, file, articles(&random))
        let query = Screen.newestUnread.query
        do {
            let store = try await Store.open(at: db, entities: [ListedArticle.self])
            var newest = try #require(try await store.fetch(query).first)
            newest.isRead = true
            var changes = ChangeSet()
            changes.update(newest)
            try await store.submit(changes).committed()
            try await store.close()
        }
        let (start, shown) = try await openWarm(db, file, query)
        #expect(start.outcome == .caughtUp(changes: 1))
        #expect(!start.showedFirstScreenEarly, "seed \(seed)")
        try await expectShownOnce(start, shown, query, seed: seed)
        try await start.store.close()
    }

    /// A damaged first chunk shows nothing early; a damaged later chunk leaves the first screen
    /// (checked on its own) shown early and the main context cold-started. Both show SQL's answer.
    @Test(arguments: [0, 1])
    func aDamagedChunkIsNeverShown(chunk number: Int) async throws {
        var (random, seed) = SeededRandom.forTest("aDamagedChunkIsNeverShown \(number)")
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        try await fill(db, file, articles(&random))
        let chunk = try #require(try Snapshot.readHeader(at: file).entities.first?.chunks[number])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        let frame = chunk.offset..<(chunk.offset + chunk.compressedSize)
        let position = try #require(Self.damagingPosition(in: bytes, frame: frame, size: chunk.uncompressedSize),
                                    "seed \(seed): no byte of the chunk's second half changes what it decodes to")
        bytes[position] ^= 0x5A
        try bytes.write(to: URL(fileURLWithPath: file))
        let query = Screen.newestUnread.query
        let (start, shown) = try await openWarm(db, file, query)
        #expect(!start.outcome.usedSnapshot, "seed \(seed): \(damageReport(file, at: position, damaged: bytes))")
        #expect(start.showedFirstScreenEarly == (number > 0), "seed \(seed)")
        try await expectShownOnce(start, shown, query, seed: seed)
        try await start.store.close()
    }

    /// The first byte from the middle of the LZ4 frame at `frame` whose change makes the frame
    /// decode to other content, or not at all. An archive refuses any changed byte of a frame (its
    /// checksum, ``anyChangedByteIsRefused()``), but LZ4 is redundant (a match offset changed to
    /// point at equal bytes decodes the same): a test that damages a frame picks a byte whose
    /// change the content would show too, so it holds whichever check catches it.
    static func damagingPosition(in bytes: Data, frame: Range<Int>, size: Int) -> Int? {
        let original = decoded(bytes, frame, size: size)
        for position in (frame.lowerBound + frame.count / 2)..<frame.upperBound {
            var damaged = bytes
            damaged[position] ^= 0x5A
            if decoded(damaged, frame, size: size) != original { return position }
        }
        return nil
    }

    /// What the LZ4 frame at `frame` of `bytes` decodes to (`size` bytes), or nil when it does not decode.
    private static func decoded(_ bytes: Data, _ frame: Range<Int>, size: Int) -> [UInt8]? {
        var content = [UInt8](repeating: 0, count: size)
        let decodes = bytes.withUnsafeBytes { raw in
            content.withUnsafeMutableBytes { destination in
                (try? LZ4Frame.decompress(UnsafeRawBufferPointer(rebasing: raw[frame]), into: [destination])) != nil
            }
        }
        return decodes ? content : nil
    }

    /// The promise behind "a damaged archive is never shown", byte by byte: an archive with any
    /// one byte changed (1,500 positions, seeded, across header and chunks) is refused — the
    /// header by its CRC-32, a chunk by the XXH64 of its bytes, checked before it is
    /// decompressed. (Format 2 checked each chunk's decompressed content instead, and accepted the
    /// one change in a hundred or so that LZ4's redundancy absorbed, with identical rows.)
    @Test func anyChangedByteIsRefused() async throws {
        var (random, seed) = SeededRandom.forTest("anyChangedByteIsRefused")
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        try await fill(db, file, articles(&random))
        let loader = SnapshotLoader(registry: try SchemaRegistry([ListedArticle.self]))
        let original = try Data(contentsOf: URL(fileURLWithPath: file))
        #expect(original.withUnsafeBytes { (try? loader.decode($0).get()) != nil }, "seed \(seed): the intact archive is refused")
        for _ in 0..<1_500 {
            let position = random.next(original.count)
            var changed = original
            changed[position] ^= UInt8(1 + random.next(255))
            let accepted = changed.withUnsafeBytes { (try? loader.decode($0).get()) != nil }
            #expect(!accepted, "seed \(seed): byte \(position) of \(original.count) changed, the archive accepted")
        }
    }

    /// What the file holds now, for a failure message: whether the damaged byte is still there,
    /// and what a fresh load of the file says.
    private func damageReport(_ file: String, at position: Int, damaged: Data) -> String {
        guard let now = try? Data(contentsOf: URL(fileURLWithPath: file)),
              let registry = try? SchemaRegistry([ListedArticle.self]) else { return "the file cannot be read again" }
        let kept = now.count == damaged.count && now[position] == damaged[position]
        let load = SnapshotLoader(registry: registry).load(file)
        return "the file \(kept ? "still holds" : "no longer holds") the damage (\(now.count) bytes); a fresh load: "
            + "\((try? load.get()).map { _ in "accepted" } ?? "refused")"
    }

    @Test func anArchiveWrittenInAnotherOrderIsRefused() async throws {
        var (random, _) = SeededRandom.forTest("anArchiveWrittenInAnotherOrderIsRefused")
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        try await fill(db, file, articles(&random))
        let query = Query<ListedArticleByFeed>(sortedBy: [Attribute("feedID").ascending], limit: 5)
        let (start, shown) = try await openWarm(db, file, query, entities: [ListedArticleByFeed.self])
        #expect(start.outcome.rejection == .schemaChanged)
        #expect(!start.showedFirstScreenEarly)
        #expect(shown.count == 1)
        #expect(shown.first?.ids == (try await start.store.fetch(query)).map(\.id))
        try await start.store.close()
    }

    /// A first chunk holding one key twice is refused alone, as the full load refuses it: it
    /// is never shown early.
    @Test func aFirstChunkWithADuplicateKeyIsRefused() throws {
        let registry = try SchemaRegistry([ListedArticle.self])
        let schema = try registry.schema(for: ListedArticle.self)
        var valid = ColumnBlock(schema: schema)
        for index in 0..<3 {
            try valid.append([.text("a-\(index)"), .integer(1), .real(Double(10 - index)), .integer(0)] as [DatabaseValue])
        }
        // The same cells with the third row's key made the first's (the arena holds "a-0a-1a-2").
        var columns = valid.columns
        columns[schema.primaryKeyIndex].payloads[2] = columns[schema.primaryKeyIndex].payloads[0]
        let duplicated = ColumnBlock(schema: schema, count: 3, columns: columns, arena: valid.arena)
        for (block, accepted) in [(valid, true), (duplicated, false)] {
            let written = try SnapshotArchive.encode([.init(schema: schema, chunks: [block])], storeID: UUID(), generation: 1,
                                                     schemas: registry.schemas)
            let bytes = written.chunks.reduce(written.header, +)
            let result = bytes.withUnsafeBytes { SnapshotLoader(registry: registry).firstChunk(of: schema.name, in: $0) }
            switch result {
            case .success(let chunk):
                #expect(accepted)
                #expect(chunk.isWholeSection && chunk.block.count == 3)
            case .failure(let rejection):
                #expect(!accepted, "\(rejection)")
                guard rejection.snapshotRejection == .undecodable else {
                    Issue.record("expected undecodable, got \(rejection)")
                    continue
                }
                #expect(rejection.message.contains("a-0"), "\(rejection.message)")
            }
        }
    }

    private struct MisorderedArticle: Entity {
        var id: String
        var published: Date
        static let snapshotOrder = [Attribute("publishedAt").descending]
    }

    @Test func anOrderOnAnUnknownAttributeIsRefusedAtRegistration() {
        #expect(throws: StrataError.self) { try SchemaRegistry([MisorderedArticle.self]) }
        do {
            _ = try SchemaRegistry([MisorderedArticle.self])
        } catch let error as StrataError {
            #expect(error.code == .unknownAttribute)
            #expect(error.description.contains("publishedAt"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
