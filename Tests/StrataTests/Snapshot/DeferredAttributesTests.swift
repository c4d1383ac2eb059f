import Foundation
@_spi(Testing) @testable import Strata
import StrataTestSupport
import Testing

/// An entity whose long values a warm start leaves compressed until read: one text attribute
/// optional, a blob, a URL (declared out of schema order, recorded in it).
struct DeferredNote: Entity, Equatable {
    var id: String
    var rank: Int64
    var title: String
    var body: String?
    var attachment: Data
    var link: URL

    static let isResident = true
    static let indexes = [EntityIndex(["rank"])]
    static let snapshotOrder = [Attribute("rank").descending]
    static let deferredAttributes = ["link", "body", "attachment"]

    static func make(_ index: Int, random: inout SeededRandom) -> DeferredNote {
        let words = (0..<random.next(40)).map { _ in ["snö", "lazy", "frame", "☃︎", "chunk"][random.next(5)] }
        return DeferredNote(id: "n-\(index)", rank: Int64(index), title: "Note \(index)",
                            body: index % 7 == 0 ? nil : words.joined(separator: " "),
                            attachment: Data((0..<random.next(24)).map { _ in UInt8(truncatingIfNeeded: random.next(256)) }),
                            link: URL(string: "https://example.com/notes/\(index)")!)
    }
}

@MainActor
@Suite struct DeferredAttributesTests {
    static let entities: [any Entity.Type] = [DeferredNote.self, ArchivedTag.self]
    /// Four chunks: the first of 1,000, two of 5,000, one of 1,000.
    static let count = 12_000

    /// A store of `count` notes and a few tags, snapshotted; the notes as saved, by ID.
    private func seed(_ directory: TemporaryDirectory) async throws -> (db: String, file: String, notes: [DeferredNote]) {
        let db = directory.path("d.sqlite"), file = directory.path("d.snapshot")
        var random = SeededRandom.forTest("DeferredAttributesTests").generator
        let notes = (0..<Self.count).map { DeferredNote.make($0, random: &random) }
        let store = try await Store.open(at: db, entities: Self.entities)
        var changes = ChangeSet()
        for note in notes { changes.insert(note) }
        for index in 0..<5 { changes.insert(ArchivedTag(id: Int64(index), name: "tag \(index)")) }
        try store.submit(changes)
        try await store.persist()
        let main = store.mainContext
        try await main.loadResidentEntities()
        _ = try await main.writeSnapshot(to: file)
        try await store.close()
        return (db, file, sorted(notes))
    }

    private func sorted(_ notes: [DeferredNote]) -> [DeferredNote] { notes.sorted { $0.id < $1.id } }

    @Test func deferredValuesAreDecompressedAChunkAtATimeWhenFirstRead() async throws {
        let directory = try TemporaryDirectory()
        let (db, file, notes) = try await seed(directory)
        let header = try Snapshot.readHeader(at: file)
        #expect(header.formatVersion == 5)
        let section = try #require(header.entities.first { $0.entity == "DeferredNote" })
        #expect(section.chunks.count == 4)
        #expect(section.chunks.allSatisfy { $0.deferredCompressedSize > 0 && $0.deferredOffset == $0.offset + $0.compressedSize })
        // The deferred frames hold exactly the three attributes' bytes; the tags defer nothing.
        let deferredBytes = notes.reduce(0) { $0 + ($1.body?.utf8.count ?? 0) + $1.attachment.count + $1.link.absoluteString.utf8.count }
        #expect(section.chunks.reduce(0) { $0 + $1.deferredSize } == deferredBytes)
        #expect(header.entities.first { $0.entity == "ArchivedTag" }!.chunks.allSatisfy { $0.deferredCompressedSize == 0 && $0.deferredSize == 0 })

        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        #expect(warm.outcome == .used)
        let table = try warm.mainContext.graph.table(DeferredNote.self).saved
        #expect(table.deferredPages == (0, 4), "nothing deferred is decompressed by the launch")
        // Titles, ranks and indexed queries need no deferred byte.
        let top = try warm.mainContext.objects(matching: Query<DeferredNote>(where: Attribute("rank") >= Int64(Self.count - 3)))
        #expect(top.count == 3)
        #expect(table.deferredPages.filled == 1, "building the newest notes decompressed their chunk only")
        // The lowest rank is in the last chunk.
        #expect(warm.mainContext.object(DeferredNote.self, id: "n-0") == notes.first { $0.id == "n-0" })
        #expect(table.deferredPages == (2, 4))
        #expect(sorted(warm.mainContext.objects(DeferredNote.self)) == notes)
        #expect(table.deferredPages == (4, 4))
        try await warm.store.close()
    }

    /// Ordering rows reads their cells as they are (``PagedArena/filled(deferred:)``): by the key
    /// or by attributes held in memory, no deferred byte is read; by a deferred attribute, every
    /// deferred page is filled first, and the order is SQL's (NULL first, ties by key).
    @Test func ordersReadDeferredValuesOnlyWhenTheySortByThem() async throws {
        let directory = try TemporaryDirectory()
        let (db, file, notes) = try await seed(directory)
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        #expect(warm.outcome == .used)
        let main = warm.mainContext
        let table = try main.graph.table(DeferredNote.self).saved

        #expect(try main.ids(matching: Query<DeferredNote>(where: Attribute("rank") >= Int64(0))) == notes.map(\.id),
                "in key order")
        let byTitle = try main.ids(matching: Query<DeferredNote>(sortedBy: [Attribute("title").descending], limit: 30))
        #expect(byTitle == Array(notes.sorted { ($0.title, $1.id) > ($1.title, $0.id) }.prefix(30).map(\.id)))
        #expect(table.deferredPages == (0, 4), "orders by the key and by a title read no deferred byte")

        let byBody = try main.ids(matching: Query<DeferredNote>(sortedBy: [Attribute("body").ascending], limit: 40))
        let expected = notes.sorted { lhs, rhs in
            switch (lhs.body, rhs.body) {
            case (nil, nil): return lhs.id < rhs.id
            case (nil, _): return true
            case (_, nil): return false
            case let (left?, right?):
                return Array(left.utf8).lexicographicallyPrecedes(Array(right.utf8))
                    || (left.utf8.elementsEqual(right.utf8) && lhs.id < rhs.id)
            }
        }
        #expect(byBody == Array(expected.prefix(40).map(\.id)))
        #expect(table.deferredPages == (4, 4), "an order by a deferred attribute read it in every row")
        try await warm.store.close()
    }

    /// Many threads reading the same chunks' deferred values at once: each page is filled once,
    /// and every reader sees the whole of it (ThreadSanitizer runs this suite in CI).
    @Test func concurrentFirstReadsAgree() async throws {
        let directory = try TemporaryDirectory()
        let (_, file, notes) = try await seed(directory)
        let registry = try SchemaRegistry(Self.entities)
        let loaded = try SnapshotLoader(registry: registry).load(file).get()
        let block = try #require(loaded.sections.first { $0.block.schema.name == "DeferredNote" }).block
        #expect(block.deferred.count == 4 && block.deferred.allSatisfy { $0.deferred?.filled == false })
        let body = try #require(block.schema.position(of: "body")), link = try #require(block.schema.position(of: "link"))
        let expected = Dictionary(uniqueKeysWithValues: notes.map { ($0.id, $0) })
        let mismatches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            // Each thread walks every row from its own starting point, so that first reads of one
            // page come from several threads together.
            for step in 0..<block.count {
                let row = (step + thread * 997) % block.count
                guard case .text(let id) = block.key(at: row), let note = expected[id] else {
                    mismatches.withLock { $0 += 1 }
                    continue
                }
                let readBody = block.value(at: row, body), readLink = block.value(at: row, link)
                if readBody != (note.body.map { .text($0) } ?? .null) || readLink != .text(note.link.absoluteString) {
                    mismatches.withLock { $0 += 1 }
                }
            }
        }
        #expect(mismatches.withLock { $0 } == 0)
        #expect(block.deferred.allSatisfy { $0.deferred?.filled == true && $0.deferred?.failed == false })
    }

    /// The corruption matrix over the deferred frames: any changed byte or a cut is refused at
    /// launch by the frame's checksum (or the header's sizes), before anything is shown.
    @Test func aDamagedDeferredFrameIsRefusedAtLaunch() async throws {
        let directory = try TemporaryDirectory()
        let (db, file, notes) = try await seed(directory)
        let good = try Data(contentsOf: URL(fileURLWithPath: file))
        let chunks = try Snapshot.readHeader(at: file).entities.first { $0.entity == "DeferredNote" }!.chunks
        var cases: [(String, Data, SnapshotRejection?)] = []
        // Each chunk's frame at its first byte, its middle or its last, in turn.
        for (number, chunk) in chunks.enumerated() {
            let offset = [chunk.deferredOffset, chunk.deferredOffset + chunk.deferredCompressedSize / 2, chunk.end - 1][number % 3]
            var flipped = good
            flipped[offset] ^= 0x04
            cases.append(("chunk \(number)'s deferred byte \(offset) flipped", flipped, .checksumMismatch))
        }
        let last = try #require(chunks.last)
        cases.append(("cut inside the last deferred frame", good.prefix(last.deferredOffset + 3), nil))
        for (label, bytes, expected) in cases {
            let candidate = directory.path("candidate.snapshot")
            try bytes.write(to: URL(fileURLWithPath: candidate))
            let verified = #expect(throws: StrataError.self, "\(label)") { try Snapshot.verify(at: candidate) }
            #expect(verified?.snapshotRejection != nil, "\(label): \(String(describing: verified))")
            let warm = try await Store.openWarm(at: db, snapshot: candidate, entities: Self.entities)
            guard let rejection = warm.outcome.rejection else {
                Issue.record("\(label): the snapshot was used")
                try await warm.store.close()
                continue
            }
            if let expected { #expect(rejection == expected, "\(label)") }
            #expect(sorted(warm.mainContext.objects(DeferredNote.self)) == notes, "\(label): not a full cold load")
            try await warm.store.close()
        }
    }

    /// A file made to pass its checksums with a deferred frame that is not LZ4 — which no damage
    /// does — is loaded (the frame is checked, not decompressed, at launch); the frame's values
    /// read as zero bytes when first read, the failure is logged as critical, and a full check
    /// of the file or the fuzzer's decode refuses it.
    @Test func aCraftedDeferredFrameReadsAsZerosAndIsReported() async throws {
        let directory = try TemporaryDirectory()
        let (db, file, notes) = try await seed(directory)
        let chunk = try #require(try Snapshot.readHeader(at: file).entities.first { $0.entity == "DeferredNote" }?.chunks[1])
        var crafted = try Data(contentsOf: URL(fileURLWithPath: file))
        // The frame's header kept (7 bytes: magic, descriptor, content size… as liblz4 wrote them);
        // its first block's size made larger than the frame.
        let blockSize = chunk.deferredOffset + 4 + 2 + 8 + 1
        crafted.replaceSubrange(blockSize..<(blockSize + 4), with: [0xFF, 0xFF, 0x0F, 0x00])
        crafted = SnapshotFuzzing.repairingChecksums(crafted)
        try crafted.write(to: URL(fileURLWithPath: file))
        let verified = #expect(throws: StrataError.self) { try Snapshot.verify(at: file) }
        #expect(verified?.snapshotRejection == .checksumMismatch)
        #expect(crafted.withUnsafeBytes { SnapshotFuzzing.decode($0, entities: Self.entities) }.rejection == .checksumMismatch)

        let recorder = LogRecorder()
        var configuration = StoreConfiguration.default
        configuration.logger = recorder.logger
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities, configuration: configuration)
        #expect(warm.outcome == .used)
        // Chunk 1 holds ranks 10,999 down to 6,000.
        let read = try #require(warm.mainContext.object(DeferredNote.self, id: "n-8000"))
        let saved = try #require(notes.first { $0.id == "n-8000" })
        #expect(read.title == saved.title, "what is not deferred reads as saved")
        #expect(read.attachment == Data(count: saved.attachment.count), "a deferred blob of the crafted frame reads as zeros")
        #expect(read.body == saved.body.map { String(repeating: "\0", count: $0.utf8.count) })
        #expect(warm.mainContext.object(DeferredNote.self, id: "n-100") == notes.first { $0.id == "n-100" }, "other chunks read as saved")
        let record = recorder.records.first { $0.level == .critical }
        #expect(record?.message.contains("deferred values do not decompress") == true)
        #expect(record?.metadata.contains("DeferredNote") == true && record?.metadata.contains("\"chunk\": 1") == true,
                "\(String(describing: record))")
        try await warm.store.close()
    }

    /// Saves after a warm start write new values beside the deferred pages; a snapshot of that
    /// context reads every deferred value back and round-trips.
    @Test func editsAfterAWarmStartAndTheNextSnapshotRoundTrip() async throws {
        let directory = try TemporaryDirectory()
        let (db, file, notes) = try await seed(directory)
        var expected = notes
        do {
            let warm = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
            #expect(warm.outcome == .used)
            let worker = warm.store.makeWorkerContext(name: "edit")
            let position = try #require(notes.firstIndex { $0.id == "n-3000" })
            var edited = notes[position]
            edited.body = "edited after launch"
            edited.link = URL(string: "https://example.com/edited")!
            expected[position] = edited
            _ = try await worker.fetch(Query<DeferredNote>(where: Attribute("id") == "n-3000"))
            let submission = try await worker.perform { [edited] context in
                try context.update(edited)
                return try context.save()
            }
            await submission?.mergedIntoMainContext()
            try await warm.store.persist()
            #expect(warm.mainContext.object(DeferredNote.self, id: "n-3000")?.body == "edited after launch")
            #expect(sorted(warm.mainContext.objects(DeferredNote.self)) == expected)
            _ = try await warm.mainContext.writeSnapshot(to: file)
            try await warm.store.close()
        }
        let again = try await Store.openWarm(at: db, snapshot: file, entities: Self.entities)
        #expect(again.outcome == .used)
        #expect(sorted(again.mainContext.objects(DeferredNote.self)) == expected)
        try await again.store.close()
    }

    /// What may be deferred, checked when the entity is registered.
    @Test(arguments: [
        (["id"], "is the primary key"), (["rank"], "stored as a number"), (["title", "flag"], "stored as a number"),
        (["key"], "part of an index"), (["order"], "part of the snapshot order"), (["title", "title"], "listed twice"),
        (["missing"], "has no attribute 'missing'"),
    ])
    func onlyTextAndBlobValuesNoLoadReadsCanBeDeferred(_ names: [String], _ said: String) throws {
        struct Candidate: Entity {
            var id: String
            var rank: Int64
            var flag: Bool
            var title: String
            var key: String
            var order: Data
            nonisolated(unsafe) static var deferred: [String] = []
            static var deferredAttributes: [String] { deferred }
            static let indexes = [EntityIndex(["key"])]
            static let snapshotOrder = [Attribute("order").ascending]
        }
        Candidate.deferred = names
        do {
            _ = try SchemaRegistry([Candidate.self])
            Issue.record("\(names) was accepted")
        } catch let error as StrataError {
            #expect(error.message.contains(said), "\(error)")
        }
    }

    @Test func theDeferredAttributesAreRecordedInSchemaOrderAndFingerprinted() throws {
        let schema = try #require(try SchemaRegistry([DeferredNote.self]).schemas.first)
        #expect(schema.deferredAttributes == ["body", "attachment", "link"])
        let json = String(decoding: try JSONEncoder().encode(schema), as: UTF8.self)
        #expect(json.contains("\"deferredAttributes\""))
        var plain = schema
        plain.deferredAttributes = []
        #expect(!String(decoding: try JSONEncoder().encode(plain), as: UTF8.self).contains("deferredAttributes"))
        #expect(SnapshotArchive.fingerprint(plain) != SnapshotArchive.fingerprint(schema))
        #expect(try JSONDecoder().decode(EntitySchema.self, from: Data(json.utf8)).deferredAttributes == schema.deferredAttributes)
    }
}
