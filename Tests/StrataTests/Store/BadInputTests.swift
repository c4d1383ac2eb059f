import Foundation
import Strata
import StrataTestSupport
import Testing

// MARK: Entities Strata must refuse

private enum BadInputShape: Codable, Sendable {
    case circle(radius: Double)
    case square(side: Double)
}

/// An attribute whose type is an enum with associated values (synthesized Codable, keyed by case).
private struct BadInputShapeHolder: Entity {
    var id: Int64
    var shape: BadInputShape
}

private enum BadInputMood: String, Codable, Sendable {  // RawRepresentable, but not CaseIterable
    case happy, sad
}

private struct BadInputMoodHolder: Entity {
    var id: Int64
    var mood: BadInputMood
}

/// An entity that encodes itself as an array.
private struct BadInputUnkeyed: Entity {
    var id: Int64
    var name: String

    init(id: Int64, name: String) {
        self.id = id
        self.name = name
    }

    init(from decoder: Decoder) throws {
        var container = try decoder.unkeyedContainer()
        id = try container.decode(Int64.self)
        name = try container.decode(String.self)
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(id)
        try container.encode(name)
    }
}

/// An entity that nests a keyed container instead of declaring a Codable property.
private struct BadInputNested: Entity {
    var id: Int64
    var street: String

    enum CodingKeys: String, CodingKey { case id, address }
    enum AddressKeys: String, CodingKey { case street }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        street = try container.nestedContainer(keyedBy: AddressKeys.self, forKey: .address)
            .decode(String.self, forKey: .street)
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        var address = container.nestedContainer(keyedBy: AddressKeys.self, forKey: .address)
        try address.encode(street, forKey: .street)
    }
}

// MARK: Entities for mistyped rows

private enum BadInputColor: String, Codable, CaseIterable, Sendable {
    case red, green
}

private struct BadInputPayload: Codable, Equatable, Sendable {
    var values: [Int]
}

private struct BadInputRecord: Entity, Equatable {
    var id: String
    var count: Int
    var small: Int8
    var flag: Bool
    var when: Date
    var token: UUID
    var color: BadInputColor
    var payload: BadInputPayload
    var name: String

    static let tableName = "bad_input_records"
    static let columnNames = ["count": "item_count"]
    static let indexes = [EntityIndex(["count"])]

    static func make(_ id: String) -> BadInputRecord {
        BadInputRecord(id: id, count: 1, small: 1, flag: true, when: Date(timeIntervalSinceReferenceDate: 1), token: UUID(),
                       color: .red, payload: BadInputPayload(values: [1]), name: "n")
    }
}

/// Mapped onto a table created by hand without NOT NULL constraints.
private struct BadInputLoose: Entity, Equatable {
    var id: String
    var name: String
    var count: Int
    var note: String?
    static let tableName = "bad_input_loose"
}

// MARK: Helpers

private func expectContext(_ error: StrataError?, _ code: StrataError.Code, entity: String? = nil, attribute: String? = nil,
                           objectID: String? = nil, path: String? = nil,
                           sourceLocation: SourceLocation = #_sourceLocation) {
    let text = String(describing: error)
    #expect(error?.code == code, "\(text)", sourceLocation: sourceLocation)
    if let entity { #expect(error?.entity == entity, "\(text)", sourceLocation: sourceLocation) }
    if let attribute { #expect(error?.attribute == attribute, "\(text)", sourceLocation: sourceLocation) }
    if let objectID { #expect(error?.objectID == objectID, "\(text)", sourceLocation: sourceLocation) }
    if let path { #expect(error?.path == path, "\(text)", sourceLocation: sourceLocation) }
    #expect(error?.message.isEmpty == false, sourceLocation: sourceLocation)
}

private func storeWithRecord(_ directory: TemporaryDirectory) async throws -> Store {
    let store = try await openStore(directory.path("records.sqlite"), entities: [BadInputRecord.self, Article.self])
    var changes = ChangeSet()
    changes.insert(BadInputRecord.make("good"))
    changes.insert(BadInputRecord.make("bad"))
    try await store.submit(changes).committed()
    return store
}

// MARK: Tests

@Suite struct BadInputTests {
    // MARK: Files

    @Test(arguments: ["random bytes", "text"])
    func fileThatIsNotADatabaseIsRefused(_ kind: String) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("not-a-database.sqlite")
        let contents: Data
        if kind == "text" {
            contents = Data(String(repeating: "This is a text file, not an SQLite database.\n", count: 200).utf8)
        } else {
            var (generator, _) = SeededRandom.forTest("fileThatIsNotADatabaseIsRefused")
            contents = Data((0..<16_384).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        }
        try contents.write(to: URL(fileURLWithPath: path))

        let error = await #expect(throws: StrataError.self) { _ = try await openStore(path) }
        expectContext(error, .notADatabase, path: path)
        // The file is left exactly as it was.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == contents)
    }

    @Test func pathBelowARegularFileCannotBeOpened() async throws {
        // Permissions would not stop root (tests may run as root), so make the parent a regular
        // file: no user, root included, can create a file "inside" a file (ENOTDIR).
        let directory = try TemporaryDirectory()
        let parent = directory.path("plain-file")
        try Data("not a directory".utf8).write(to: URL(fileURLWithPath: parent))
        let path = parent + "/store.sqlite"

        let error = await #expect(throws: StrataError.self) { _ = try await openStore(path) }
        expectContext(error, .cannotOpen, path: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: parent)) == Data("not a directory".utf8))
    }

    @Test func pathInAMissingDirectoryCannotBeOpened() async throws {
        let directory = try TemporaryDirectory()
        let missing = directory.path("no-such-directory")
        let path = missing + "/store.sqlite"

        let error = await #expect(throws: StrataError.self) { _ = try await openStore(path) }
        expectContext(error, .cannotOpen, path: path)
        #expect(!FileManager.default.fileExists(atPath: missing))  // not created behind our back
    }

    // MARK: Entity declarations

    @Test func enumWithAssociatedValuesIsUnsupported() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("unsupported.sqlite")
        let error = await #expect(throws: StrataError.self) {
            _ = try await openStore(path, entities: [Feed.self, BadInputShapeHolder.self])
        }
        expectContext(error, .unsupportedAttribute, entity: "BadInputShapeHolder", attribute: "shape")
        #expect(!FileManager.default.fileExists(atPath: path))  // refused before touching the disk
    }

    @Test func rawRepresentableThatIsNotCaseIterableIsUnsupported() async throws {
        let directory = try TemporaryDirectory()
        let error = await #expect(throws: StrataError.self) {
            _ = try await openStore(directory.path("unsupported.sqlite"), entities: [BadInputMoodHolder.self])
        }
        expectContext(error, .unsupportedAttribute, entity: "BadInputMoodHolder", attribute: "mood")
        #expect(error?.message.contains("CaseIterable") == true, "\(String(describing: error))")
    }

    @Test func entityEncodedAsAnArrayIsUnsupported() async throws {
        let directory = try TemporaryDirectory()
        let error = await #expect(throws: StrataError.self) {
            _ = try await openStore(directory.path("unsupported.sqlite"), entities: [BadInputUnkeyed.self])
        }
        // No attribute to name: the entity as a whole is not keyed.
        expectContext(error, .unsupportedAttribute, entity: "BadInputUnkeyed")
    }

    @Test func entityWithNestedContainerIsUnsupported() async throws {
        let directory = try TemporaryDirectory()
        let error = await #expect(throws: StrataError.self) {
            _ = try await openStore(directory.path("unsupported.sqlite"), entities: [BadInputNested.self])
        }
        expectContext(error, .unsupportedAttribute, entity: "BadInputNested", attribute: "address")
    }

    // MARK: Stored rows that do not fit the entity

    @Test(arguments: [
        ("item_count", "'abc'", "count"),  // TEXT in an INTEGER column (affinity cannot convert it)
        ("item_count", "1.5", "count"),  // a REAL that is not an integer
        ("small", "1000", "small"),  // does not fit Int8
        ("flag", "x'01'", "flag"),  // a blob in a Bool
        ("\"when\"", "'yesterday'", "when"),  // text in a Date
        ("token", "'not-a-uuid'", "token"),
        ("color", "'purple'", "color"),  // not a case of the enum
        ("payload", "'{not json'", "payload"),
        ("payload", "'[1, 2]'", "payload"),  // valid JSON, wrong shape
        ("name", "x'6869'", "name"),  // a blob in a String (TEXT affinity would turn a number into text)
    ])
    func mistypedRowFailsTheFetchWithTypeMismatch(_ column: String, _ literal: String, _ attribute: String) async throws {
        let directory = try TemporaryDirectory()
        let store = try await storeWithRecord(directory)
        let changed = try await store.write { db in
            try db.execute("UPDATE bad_input_records SET \(column) = \(literal) WHERE id = 'bad'")
            return db.changes
        }
        #expect(changed == 1)
        let columnName = try #require(try store.schema(of: BadInputRecord.self).attributes.first { $0.name == attribute }?.column)
        for fetch in [
            { try await store.fetch(Query<BadInputRecord>()) },
            { try await store.fetch(BadInputRecord.self, ids: ["bad"]) },
        ] {
            let error = await #expect(throws: StrataError.self, "\(column) = \(literal)") { _ = try await fetch() }
            expectContext(error, .typeMismatch, entity: "BadInputRecord", attribute: columnName, objectID: "bad")
        }
        // The good row is still readable on its own, and nothing decodes the bad one to count it.
        #expect(try await store.fetch(BadInputRecord.self, id: "good")?.id == "good")
        #expect(try await store.count(Query<BadInputRecord>()) == 2)
    }

    @Test func nullInANonOptionalAttributeIsRefusedAtOpenAndFailsAFetchWithUnexpectedNull() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("loose.sqlite")
        do {
            // A table created by hand, without NOT NULL, before the entity is registered.
            let store = try await openStore(path, entities: [])
            try await store.write { db in
                try db.execute("CREATE TABLE bad_input_loose (id TEXT PRIMARY KEY, name TEXT, count INTEGER, note TEXT)")
                try db.execute("INSERT INTO bad_input_loose VALUES ('fine', 'a', 1, NULL), ('nameless', NULL, 2, NULL), "
                               + "('countless', 'c', NULL, 'n')")
            }
            try await store.close()
        }
        // Rows with no value for a non-optional attribute: the open says so, before anything changes.
        let before = FileState(path)
        let refused = await #expect(throws: StrataError.self) { _ = try await openStore(path, entities: [BadInputLoose.self]) }
        expectContext(refused, .incompatibleSchema, entity: "BadInputLoose", attribute: "name", objectID: nil)
        #expect(refused?.message.contains("1 rows hold NULL") == true, "\(String(describing: refused))")
        #expect(FileState(path) == before)

        // Filled, the table is accepted as it is; NULLs written afterwards by raw SQL fail the fetch.
        do {
            let store = try await openStore(path, entities: [])
            try await store.write { db in
                try db.execute("UPDATE bad_input_loose SET name = 'b' WHERE name IS NULL")
                try db.execute("UPDATE bad_input_loose SET count = 3 WHERE count IS NULL")
            }
            try await store.close()
        }
        let store = try await openStore(path, entities: [BadInputLoose.self])
        #expect(store.appliedMigrations.isEmpty)  // the existing table was accepted as it is
        try await store.write { db in
            try db.execute("UPDATE bad_input_loose SET name = NULL WHERE id = 'nameless'")
            try db.execute("UPDATE bad_input_loose SET count = NULL WHERE id = 'countless'")
        }

        #expect(try await store.fetch(BadInputLoose.self, id: "fine") == BadInputLoose(id: "fine", name: "a", count: 1, note: nil))
        let nameless = await #expect(throws: StrataError.self) { _ = try await store.fetch(BadInputLoose.self, id: "nameless") }
        expectContext(nameless, .unexpectedNull, entity: "BadInputLoose", attribute: "name", objectID: "nameless")
        let countless = await #expect(throws: StrataError.self) { _ = try await store.fetch(BadInputLoose.self, id: "countless") }
        expectContext(countless, .unexpectedNull, entity: "BadInputLoose", attribute: "count", objectID: "countless")
        let all = await #expect(throws: StrataError.self) { _ = try await store.fetch(Query<BadInputLoose>()) }
        #expect(all?.code == .unexpectedNull)
    }

    // MARK: Change sets and queries

    @Test func unknownEntityIsRefusedBySubmit() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("unknown.sqlite"), entities: [Feed.self])
        let operations: [(String, ChangeSet)] = [
            ("insert", { var c = ChangeSet(); c.insert(Article.make(1)); return c }()),
            ("upsert", { var c = ChangeSet(); c.upsert(Article.make(1)); return c }()),
            ("delete", { var c = ChangeSet(); c.delete(Article.self, id: "x"); return c }()),
            ("updateAll", { var c = ChangeSet(); c.updateAll(Article.self, ids: ["x"], set: ["isRead": true]); return c }()),
            ("deleteAll", { var c = ChangeSet(); c.deleteAll(Article.self, where: .all); return c }()),
            // A known entity first does not let an unknown one through.
            ("mixed", { var c = ChangeSet(); c.insert(Feed(id: 1, name: "f")); c.insert(Article.make(1)); return c }()),
        ]
        for (label, changes) in operations {
            let error = #expect(throws: StrataError.self, "\(label)") { try store.submit(changes) }
            expectContext(error, .unknownEntity, entity: "Article")
            #expect(error?.message.contains("Feed") == true, "lists the registered entities: \(String(describing: error))")
        }
        #expect(store.pendingCount == 0)  // nothing was accepted
        try await store.persist()
        #expect(try await store.allIDs(Feed.self).isEmpty)
        let fetchError = await #expect(throws: StrataError.self) { _ = try await store.fetch(Query<Article>()) }
        expectContext(fetchError, .unknownEntity, entity: "Article")
    }

    /// A type that is not the registered one but names its entity: its saves are refused when
    /// submitted (merges take a sealed save's row as the registered type's), naming both types.
    @Test func aSecondTypeUnderARegisteredEntityNameIsRefusedBySubmit() async throws {
        struct FeedImpostor: Entity {
            var id: Int64
            var name: String
            static var entityName: String { "Feed" }
        }
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("impostor.sqlite"), entities: [Feed.self])
        let main = await store.mainContext
        for mode in ["insert", "upsert", "update"] {
            var changes = ChangeSet()
            changes.insert(Feed(id: 1, name: "real"))
            switch mode {
            case "insert": changes.insert(FeedImpostor(id: 2, name: "impostor"))
            case "upsert": changes.upsert(FeedImpostor(id: 2, name: "impostor"))
            default: changes.update(FeedImpostor(id: 2, name: "impostor"))
            }
            let error = #expect(throws: StrataError.self, "\(mode)") { try store.submit(changes) }
            expectContext(error, .unknownEntity, entity: "Feed")
            #expect(error?.message.contains("FeedImpostor") == true, "names the type saved: \(String(describing: error))")
        }
        #expect(store.pendingCount == 0)  // nothing was accepted
        try await store.persist()
        #expect(try await store.allIDs(Feed.self).isEmpty)
        #expect(await main.objects(Feed.self).isEmpty)
        try await store.close()
    }

    @Test func unknownAttributeInAFilterOrSortIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("filters.sqlite"))
        let queries: [(String, Query<Article>)] = [
            ("compare", Query(where: Attribute("nope") == 1)),
            ("nested", Query(where: Attribute("isRead") == false && !(Attribute("feedID") == 1 || Attribute("nope").isNull))),
            ("in", Query(where: Attribute("nope").in([1, 2]))),
            ("prefix", Query(where: Attribute("nope").hasPrefix("a"))),
            ("column name instead of attribute", Query(where: Attribute("uniqueID") == "a")),
            ("sort", Query(sortedBy: [Attribute("nope").ascending])),
        ]
        for (label, query) in queries {
            let error = await #expect(throws: StrataError.self, "\(label)") { _ = try await store.fetch(query) }
            let expected = label.hasPrefix("column") ? "uniqueID" : "nope"
            expectContext(error, .unknownAttribute, entity: "Article", attribute: expected)
            let counted = await #expect(throws: StrataError.self, "\(label)") { _ = try await store.count(query) }
            #expect(counted?.code == .unknownAttribute)
        }
        // The same in bulk operations, refused by submit before anything is accepted.
        let bulkFilter = #expect(throws: StrataError.self) { try store.deleteAll(Article.self, where: Attribute("nope") == 1) }
        expectContext(bulkFilter, .unknownAttribute, entity: "Article", attribute: "nope")
        let bulkSet = #expect(throws: StrataError.self) { try store.updateAll(Article.self, ids: ["a"], set: ["nope": 1]) }
        expectContext(bulkSet, .unknownAttribute, entity: "Article", attribute: "nope")
        #expect(store.pendingCount == 0)
    }

    @Test func mistypedFilterValueIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("mistyped.sqlite"))
        let filters: [(String, Filter, String)] = [
            ("string for an Int64", Attribute("feedID") == "1", "feedID"),
            ("Int for a String", Attribute("title") == 5, "title"),
            ("string for a Date", Attribute("published") > "2024-01-01", "published"),
            ("string for a Bool", Attribute("isRead") == "false", "isRead"),
            ("blob for a URL", Attribute("url") == Data([1]), "url"),
            ("NaN", Attribute("published") < Double.nan, "published"),
            ("mistyped member of IN", Attribute("feedID").in(["1"]), "feedID"),
            ("prefix of a number", Attribute("feedID").hasPrefix("1"), "feedID"),
        ]
        for (label, filter, attribute) in filters {
            let error = await #expect(throws: StrataError.self, "\(label)") { _ = try await store.fetch(Query<Article>(where: filter)) }
            expectContext(error, .invalidValue, entity: "Article", attribute: attribute)
            let bulk = #expect(throws: StrataError.self, "\(label)") { try store.updateAll(Article.self, where: filter, set: ["isRead": true]) }
            #expect(bulk?.code == .invalidValue, "\(label)")
        }
        // A mistyped bulk-update value, and NULL for a non-optional attribute.
        let mistypedSet = #expect(throws: StrataError.self) { try store.updateAll(Article.self, ids: ["a"], set: ["feedID": "x"]) }
        expectContext(mistypedSet, .invalidValue, entity: "Article", attribute: "feedID")
        let nullSet = #expect(throws: StrataError.self) {
            try store.updateAll(Article.self, ids: ["a"], set: ["title": String?.none])
        }
        expectContext(nullSet, .invalidValue, entity: "Article", attribute: "title")
        let keySet = #expect(throws: StrataError.self) { try store.updateAll(Article.self, ids: ["a"], set: ["id": "b"]) }
        expectContext(keySet, .invalidValue, entity: "Article", attribute: "id")
        #expect(store.pendingCount == 0)

        // The same filters with well-typed values are accepted.
        #expect(try await store.fetch(Query<Article>(where: Attribute("feedID") == 1 && Attribute("title") == "t")).isEmpty)
    }
}
