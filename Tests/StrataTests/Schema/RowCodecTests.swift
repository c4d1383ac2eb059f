import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// An entity with a hand-written row codec covering every storage Strata has.
struct CodecNote: Entity, Equatable {
    enum Kind: String, Codable, CaseIterable { case news, blog }
    struct Meta: Codable, Equatable { var tags: [String] }

    var id: String
    var feedID: Int64
    var title: String
    var summary: String?
    var url: URL
    var published: Date
    var isRead: Bool
    var score: Double
    var kind: Kind
    var previousKind: Kind?
    var meta: Meta
    var payload: Data
    var token: UUID
    var small: Int8

    static let isResident = true
    static let indexes = [EntityIndex(["feedID", "isRead"])]

    /// How many objects were built by ``init(row:)``: proves which path Strata took.
    static let decoded = Counter()

    init(id: String, feedID: Int64, title: String, summary: String?, url: URL, published: Date, isRead: Bool,
         score: Double, kind: Kind, previousKind: Kind?, meta: Meta, payload: Data, token: UUID, small: Int8) {
        self.id = id; self.feedID = feedID; self.title = title; self.summary = summary; self.url = url
        self.published = published; self.isRead = isRead; self.score = score; self.kind = kind
        self.previousKind = previousKind; self.meta = meta; self.payload = payload; self.token = token; self.small = small
    }

    init(row: inout RowReader) throws {
        id = try row.read()
        feedID = try row.read()
        title = try row.read()
        summary = try row.read()
        url = try row.read()
        published = try row.read()
        isRead = try row.read()
        score = try row.read()
        kind = try row.readRawValue()
        previousKind = try row.readRawValue(Kind?.self)
        meta = try row.readJSON()
        payload = try row.read()
        token = try row.read()
        small = try row.read()
        Self.decoded.increment()
    }

    func encode(row: inout RowWriter) throws {
        try row.write(id)
        try row.write(feedID)
        try row.write(title)
        try row.write(summary)
        try row.write(url)
        try row.write(published)
        try row.write(isRead)
        try row.write(score)
        try row.writeRawValue(kind)
        try row.writeRawValue(previousKind)
        try row.writeJSON(meta)
        try row.write(payload)
        try row.write(token)
        try row.write(small)
    }

    static func random(_ index: Int, _ random: inout SeededRandom) -> CodecNote {
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        return CodecNote(
            id: "note-\(index)", feedID: Int64(bitPattern: random.next()) >> Int64(random.next() % 64),
            title: pick(["", "a", "snö ☃︎", "\"quoted\"", "line\nbreak", "e\u{301}"]) + "\(index)",
            summary: pick([nil, "", "summary \(index)"]), url: URL(string: "https://example.com/\(index)?q=\(random.next() % 9)")!,
            published: Date(timeIntervalSinceReferenceDate: Double(Int64(bitPattern: random.next() % 10_000_000_000)) / 7),
            isRead: random.next() % 2 == 0, score: pick([0, -1.5, 1e300, -.infinity, 3.25]), kind: pick(Kind.allCases),
            previousKind: pick([nil, .news, .blog]), meta: Meta(tags: (0..<Int(random.next() % 3)).map { "t\($0)" }),
            payload: Data((0..<Int(random.next() % 5)).map { _ in UInt8(random.next() % 256) }), token: UUID(),
            small: Int8(truncatingIfNeeded: random.next()))
    }
}

/// A thread-safe count.
final class Counter: @unchecked Sendable {
    // Safe: `value` is only read or written while `lock` is held.
    private var value = 0
    private let lock = NSLock()
    func increment() { lock.lock(); value += 1; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return value }
}

/// A codec that wrote its attributes in the wrong order, one that writes too few, and one that
/// reads too many: each must fail clearly, never store or show a wrong row.
struct SwappedCodec: Entity, Equatable {
    var id: String
    var count: Int64
    var name: String
    func encode(row: inout RowWriter) throws {
        try row.write(id)
        try row.write(name)      // wrong order: `count` comes first in the schema
        try row.write(count)
    }
}

struct ShortCodec: Entity, Equatable {
    var id: String
    var name: String
    func encode(row: inout RowWriter) throws { try row.write(id) }
    init(id: String, name: String) { self.id = id; self.name = name }
    init(row: inout RowReader) throws {
        id = try row.read()
        name = try row.read()
        _ = try row.read(String.self)   // one more than the schema has
    }
}

@MainActor
@Suite struct RowCodecTests {
    @Test func aHandWrittenCodecStoresExactlyWhatCodableStores() throws {
        var (random, seed) = SeededRandom.forTest(#function)
        let schema = try SchemaRegistry([CodecNote.self]).schema(for: CodecNote.self)
        let encoder = RowEncoder(schema: schema)
        let decoder = RowDecoder<[DatabaseValue]>(schema: schema)
        for index in 0..<500 {
            let note = CodecNote.random(index, &random)
            let viaCodec = try encoder.encode(note)
            let viaCodable = try encoder.encodeWithCodable(note)
            #expect(viaCodec == viaCodable, "seed \(seed), object \(index)")
            let decoded = try decoder.decode(CodecNote.self, from: viaCodable)
            #expect(decoded == note, "seed \(seed), object \(index)")
        }
    }

    @Test func theCodecServesSavesFetchesMergesAndWarmStarts() async throws {
        let directory = try TemporaryDirectory()
        let db = directory.path("s.sqlite"), file = directory.path("s.snapshot")
        var random = SeededRandom(seed: 7)
        let notes = (0..<200).map { CodecNote.random($0, &random) }
        do {
            let store = try await Store.open(at: db, entities: [CodecNote.self])
            let main = store.mainContext
            try await main.loadResidentEntities()
            let worker = store.makeWorkerContext()
            try await worker.perform { worker in
                for note in notes { try worker.insert(note) }
                try worker.save()
            }
            try await store.persist()
            #expect(main.objects(CodecNote.self) == notes.sorted { $0.id < $1.id })
            let before = CodecNote.decoded.count
            #expect(try await store.fetch(Query<CodecNote>(sortedBy: [Attribute("id").ascending])) == notes.sorted { $0.id < $1.id })
            #expect(CodecNote.decoded.count >= before + 200, "fetches decode through init(row:)")
            try await main.updateAll(CodecNote.self, ids: notes.prefix(10).map(\.id), set: ["isRead": true]).committed()
            #expect(main.objects(CodecNote.self).filter(\.isRead).count == notes.filter(\.isRead).count
                    + notes.prefix(10).filter { !$0.isRead }.count)
            try await main.writeSnapshot(to: file)
            try await store.close()
        }
        let warm = try await Store.openWarm(at: db, snapshot: file, entities: [CodecNote.self])
        #expect(warm.outcome == .used)
        #expect(warm.mainContext.objects(CodecNote.self) == (try await warm.store.fetch(Query<CodecNote>(sortedBy: [Attribute("id").ascending]))))
        try await warm.store.close()
    }

    @Test func aCodecThatDriftsFromTheSchemaFailsClearly() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.path("s.sqlite"), entities: [SwappedCodec.self, ShortCodec.self])
        var swapped = ChangeSet()
        swapped.insert(SwappedCodec(id: "a", count: 1, name: "n"))
        let swapError = await #expect(throws: StrataError.self) { try await store.submit(swapped).committed() }
        #expect(swapError?.code == .typeMismatch)
        #expect(swapError?.attribute == "count")
        #expect(swapError?.message.contains("schema order: id, count, name") == true, "\(String(describing: swapError))")

        var short = ChangeSet()
        short.insert(ShortCodec(id: "b", name: "n"))
        let shortError = await #expect(throws: StrataError.self) { try await store.submit(short).committed() }
        #expect(shortError?.code == .unsupportedAttribute)
        #expect(shortError?.message.contains("wrote 1 values; the schema has 2") == true, "\(String(describing: shortError))")
        #expect(try await store.read { db in try db.value("SELECT count(*) FROM ShortCodec") } == .integer(0))

        // A row stored by other means is read by the codec, which reads one too many.
        try await store.write { db in try db.execute("INSERT INTO ShortCodec (id, name) VALUES ('c', 'n')") }
        let readError = await #expect(throws: StrataError.self) { _ = try await store.fetch(ShortCodec.self, id: "c") }
        #expect(readError?.message.contains("read more than the schema's 2 attributes") == true, "\(String(describing: readError))")
        #expect(readError?.objectID == "c")
    }

    @Test func aStoredValueThatDoesNotFitNamesTheAttribute() async throws {
        let directory = try TemporaryDirectory()
        let store = try await Store.open(at: directory.path("s.sqlite"), entities: [CodecNote.self])
        var random = SeededRandom(seed: 3)
        var changes = ChangeSet()
        changes.insert(CodecNote.random(1, &random))
        try await store.submit(changes).committed()
        try await store.write { db in try db.execute("UPDATE CodecNote SET published = 'yesterday', small = 1000") }
        let error = await #expect(throws: StrataError.self) { _ = try await store.fetch(CodecNote.self, id: "note-1") }
        #expect(error?.code == .typeMismatch)
        #expect(error?.attribute == "published")
        #expect(error?.objectID == "note-1")
        try await store.write { db in try db.execute("UPDATE CodecNote SET published = 0") }
        let range = await #expect(throws: StrataError.self) { _ = try await store.fetch(CodecNote.self, id: "note-1") }
        #expect(range?.code == .typeMismatch)
        #expect(range?.attribute == "small")
    }
}
