import Foundation
import Strata
import StrataTestSupport
import Testing

// MARK: Entities

/// One non-optional attribute of every scalar type Strata stores directly.
private struct RoundTripScalars: Entity, Equatable {
    var id: String
    var bool: Bool
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint: UInt
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var double: Double
    var float: Float
    var string: String
    var date: Date
    var uuid: UUID
    var data: Data
    var url: URL
    var decimal: Decimal

    static let tableName = "round_trip_scalars"

    static func zero(_ id: String) -> RoundTripScalars {
        RoundTripScalars(id: id, bool: false, int: 0, int8: 0, int16: 0, int32: 0, int64: 0, uint: 0, uint8: 0,
                         uint16: 0, uint32: 0, uint64: 0, double: 0, float: 0, string: "",
                         date: Date(timeIntervalSinceReferenceDate: 0), uuid: UUID(), data: Data(),
                         url: URL(string: "https://example.com")!, decimal: 0)
    }
}

/// The same types, all optional.
private struct RoundTripOptionals: Entity, Equatable {
    var id: Int64
    var bool: Bool?
    var int: Int?
    var int8: Int8?
    var int16: Int16?
    var int32: Int32?
    var int64: Int64?
    var uint: UInt?
    var uint8: UInt8?
    var uint16: UInt16?
    var uint32: UInt32?
    var uint64: UInt64?
    var double: Double?
    var float: Float?
    var string: String?
    var date: Date?
    var uuid: UUID?
    var data: Data?
    var url: URL?
    var decimal: Decimal?
    var color: RoundTripColor?
    var priority: RoundTripPriority?
    var address: RoundTripAddress?
    var numbers: [Int]?

    static let tableName = "round_trip_optionals"
}

private enum RoundTripColor: String, Codable, CaseIterable, Sendable {
    case red, green
    case blue = "bleu \"quoted\" ü"
}

private enum RoundTripPriority: Int, Codable, CaseIterable, Sendable {
    case low = -1, normal = 0, high = 1, urgent = 9_000_000_000
}

private enum RoundTripLevel: UInt8, Codable, CaseIterable, Sendable {
    case minimum = 0, maximum = 255
}

private enum RoundTripRatio: Double, Codable, CaseIterable, Sendable {
    case half = 0.5, third = 0.333_333_333_333_333_3
}

private struct RoundTripAddress: Codable, Equatable, Sendable {
    var street: String
    var zip: Int
    var tags: [String]
    var location: RoundTripLocation?
    var since: Date
}

private struct RoundTripLocation: Codable, Equatable, Sendable {
    var latitude: Double
    var longitude: Double
}

/// Raw-value enums and nested `Codable` values (stored as JSON).
private struct RoundTripComposite: Entity, Equatable {
    var id: UUID
    var color: RoundTripColor
    var priority: RoundTripPriority
    var level: RoundTripLevel
    var ratio: RoundTripRatio
    var address: RoundTripAddress
    var numbers: [Int]
    var matrix: [[Double]]
    var scores: [String: Double]
    var byNumber: [Int: String]
    var addresses: [RoundTripAddress]

    static let tableName = "round_trip_composites"
}

/// Values SQLite cannot hold.
private struct RoundTripUnstorable: Entity, Equatable {
    var id: Int
    var double: Double
    var float: Float
    var maybeDouble: Double?
    var uint64: UInt64
    var uint: UInt
    var location: RoundTripLocation

    static let tableName = "round_trip_unstorable"

    static func valid(_ id: Int) -> RoundTripUnstorable {
        RoundTripUnstorable(id: id, double: 1, float: 1, maybeDouble: nil, uint64: 1, uint: 1,
                            location: RoundTripLocation(latitude: 0, longitude: 0))
    }
}

private let roundTripEntities: [any Entity.Type] = [
    RoundTripScalars.self, RoundTripOptionals.self, RoundTripComposite.self, RoundTripUnstorable.self,
]

/// Saves `objects`, then reads them back from a fresh store on the same file, so that every value
/// comes from SQLite and not from memory.
private func roundTrip<E: Entity>(_ objects: [E], in directory: TemporaryDirectory) async throws -> [E] {
    let path = directory.path("round-trip.sqlite")
    do {
        let store = try await openStore(path, entities: roundTripEntities)
        var changes = ChangeSet()
        objects.forEach { changes.insert($0) }
        try await store.submit(changes).committed()
    }
    let reopened = try await openStore(path, entities: roundTripEntities)
    return try await reopened.fetch(Query<E>())
}

/// The SQLite storage class (`typeof`) of each column of one row.
private func storageClasses(_ store: Store, table: String, key: String, id: DatabaseValue) async throws -> [String: String] {
    try await store.read { db in
        var classes: [String: String] = [:]
        for column in try db.columns(in: table) {
            let value = try db.value("SELECT typeof(\"\(column.name)\") FROM \(table) WHERE \(key) = ?", [id])
            if case .text(let storage)? = value { classes[column.name] = storage }
        }
        return classes
    }
}

// MARK: Tests

@Suite struct TypeRoundTripTests {
    @Test func integerBoundariesRoundTripExactly() async throws {
        let directory = try TemporaryDirectory()
        var minimum = RoundTripScalars.zero("minimum")
        minimum.int = .min
        minimum.int8 = .min
        minimum.int16 = .min
        minimum.int32 = .min
        minimum.int64 = .min
        minimum.uint = .min
        minimum.uint8 = .min
        minimum.uint16 = .min
        minimum.uint32 = .min
        minimum.uint64 = .min
        var maximum = RoundTripScalars.zero("maximum")
        maximum.bool = true
        maximum.int = .max
        maximum.int8 = .max
        maximum.int16 = .max
        maximum.int32 = .max
        maximum.int64 = .max
        maximum.uint = UInt(Int64.max)
        maximum.uint8 = .max
        maximum.uint16 = .max
        maximum.uint32 = .max
        maximum.uint64 = UInt64(Int64.max)
        var ordinary = RoundTripScalars.zero("ordinary")
        ordinary.int = -42
        ordinary.int8 = -7
        ordinary.int16 = 12_345
        ordinary.int32 = -2_000_000_000
        ordinary.int64 = 1 << 53 + 1  // not representable as a Double: must not go through one
        ordinary.uint = 3
        ordinary.uint8 = 200
        ordinary.uint16 = 60_000
        ordinary.uint32 = 4_000_000_000
        ordinary.uint64 = UInt64(Int64.max) - 1

        let fetched = try await roundTrip([minimum, maximum, ordinary], in: directory)
        #expect(fetched == [maximum, minimum, ordinary])
        let byID = Dictionary(uniqueKeysWithValues: fetched.map { ($0.id, $0) })
        #expect(byID["minimum"]?.int64 == Int64.min)
        #expect(byID["maximum"]?.int64 == Int64.max)
        #expect(byID["maximum"]?.uint64 == UInt64(Int64.max))
        #expect(byID["ordinary"]?.int64 == 9_007_199_254_740_993)
        #expect(byID["maximum"]?.bool == true)
        #expect(byID["minimum"]?.bool == false)
    }

    @Test func doublesAndFloatsRoundTripBitForBit() async throws {
        let directory = try TemporaryDirectory()
        let doubles: [Double] = [
            0.0, 1.0, -1.5, .pi, 0.1, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            .leastNormalMagnitude, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, .infinity, -.infinity,
            1e300, 1e-300, 9_007_199_254_740_992, 123_456_789.123_456_789,
        ]
        let floats: [Float] = [0.0, -1.5, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .pi, -.infinity, 0.1]
        let objects = doubles.enumerated().map { index, value in
            var object = RoundTripScalars.zero(String(format: "d%02d", index))
            object.double = value
            object.float = floats[index % floats.count]
            return object
        }
        let fetched = try await roundTrip(objects, in: directory)
        #expect(fetched.count == objects.count)
        for (original, stored) in zip(objects, fetched) {
            #expect(stored.id == original.id)
            #expect(stored.double.bitPattern == original.double.bitPattern,
                    "\(original.id): stored \(stored.double), expected \(original.double)")
            #expect(stored.float.bitPattern == original.float.bitPattern,
                    "\(original.id): stored \(stored.float), expected \(original.float)")
        }
    }

    /// Documented limitation (see `Double.databaseValue`): SQLite's REAL storage writes an
    /// integral double as an integer, so -0.0 reads back as +0.0. The value still compares equal.
    @Test func negativeZeroReadsBackAsAnEqualZero() async throws {
        let directory = try TemporaryDirectory()
        var object = RoundTripScalars.zero("negative-zero")
        object.double = -0.0
        object.float = -0.0
        let fetched = try await roundTrip([object], in: directory)
        #expect(fetched == [object])
        #expect(fetched.first?.double == 0 && fetched.first?.double.sign == .plus)
        #expect(fetched.first?.float == 0 && fetched.first?.float.sign == .plus)
    }

    @Test func stringsRoundTripExactly() async throws {
        let directory = try TemporaryDirectory()
        let strings = [
            "", " ", "plain", "it's \"quoted\" 'twice' ''", "; DROP TABLE round_trip_scalars; --",
            "Grüße, café, naïve", "日本語のテキスト", "emoji 👩‍👩‍👧‍👦🇫🇷🏳️‍🌈", "line\nbreak\ttab\r\n",
            "e\u{301} vs é", "embedded \u{0} NUL", String(repeating: "long ", count: 20_000),
        ]
        let objects = strings.enumerated().map { index, value in
            var object = RoundTripScalars.zero(String(format: "s%02d", index))
            object.string = value
            return object
        }
        let fetched = try await roundTrip(objects, in: directory)
        #expect(fetched.count == strings.count)
        for (original, stored) in zip(objects, fetched) {
            // Compare scalars, not String ==, which treats canonically equivalent strings as equal.
            #expect(Array(stored.string.unicodeScalars) == Array(original.string.unicodeScalars),
                    "\(original.id): stored \(stored.string.debugDescription.prefix(80))")
        }
    }

    @Test func datesKeepSubSecondPrecision() async throws {
        let directory = try TemporaryDirectory()
        let dates = [
            Date(), Date(timeIntervalSinceReferenceDate: 0.123_456_789), Date(timeIntervalSince1970: 0),
            Date(timeIntervalSince1970: -1_234_567_890.987_654), Date(timeIntervalSinceReferenceDate: 1e-9),
            Date.distantPast, Date.distantFuture, Date(timeIntervalSince1970: 1_700_000_000.000_001),
        ]
        let objects = dates.enumerated().map { index, value in
            var object = RoundTripScalars.zero("date-\(index)")
            object.date = value
            return object
        }
        let fetched = try await roundTrip(objects, in: directory)
        #expect(fetched.count == dates.count)
        for (original, stored) in zip(objects, fetched) {
            #expect(stored.date == original.date)
            #expect(stored.date.timeIntervalSinceReferenceDate.bitPattern
                    == original.date.timeIntervalSinceReferenceDate.bitPattern, "\(original.id)")
        }
    }

    @Test func uuidDataURLAndDecimalRoundTrip() async throws {
        let directory = try TemporaryDirectory()
        var first = RoundTripScalars.zero("a")
        first.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        first.data = Data()
        first.url = URL(string: "https://example.com/path/to%20file?query=a%26b&x=%C3%BC#fragment")!
        first.decimal = Decimal(string: "12345678901234567890.123456789", locale: Locale(identifier: "en_US_POSIX"))!
        var second = RoundTripScalars.zero("b")
        second.uuid = UUID()
        second.data = Data((0...255).map { UInt8($0) } + [0, 0, 0])
        second.url = URL(string: "file:///tmp/some%20dir/file.txt")!
        second.decimal = Decimal(string: "-0.000000000000000000000001", locale: Locale(identifier: "en_US_POSIX"))!
        var third = RoundTripScalars.zero("c")
        third.data = Data(repeating: 0xAB, count: 1_000_000)
        third.url = URL(string: "mailto:someone@example.com")!
        third.decimal = Decimal(12.5)

        let fetched = try await roundTrip([first, second, third], in: directory)
        #expect(fetched == [first, second, third])
        #expect(fetched.first?.data.isEmpty == true)
        #expect(fetched.map(\.url.absoluteString) == [first, second, third].map(\.url.absoluteString))
        #expect(fetched.map(\.decimal.description) == ["12345678901234567890.123456789",
                                                     "-0.000000000000000000000001", "12.5"])
    }

    @Test func valuesAreStoredInTheirDocumentedStorageClass() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("classes.sqlite"), entities: roundTripEntities)
        var object = RoundTripScalars.zero("x")
        object.bool = true
        object.double = 2  // integral: must still read back as a Double
        object.date = Date(timeIntervalSinceReferenceDate: 3)
        object.uuid = UUID(uuidString: "e621e1f8-c36c-495a-93fc-0c247a3e6e5f")!
        var changes = ChangeSet()
        changes.insert(object)
        try await store.submit(changes).committed()

        let classes = try await storageClasses(store, table: "round_trip_scalars", key: "id", id: .text("x"))
        for integer in ["bool", "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64"] {
            #expect(classes[integer] == "integer", "\(integer) is \(classes[integer] ?? "missing")")
        }
        for real in ["double", "float", "date"] {
            #expect(classes[real] == "real", "\(real) is \(classes[real] ?? "missing")")
        }
        for text in ["string", "uuid", "url", "decimal"] {
            #expect(classes[text] == "text", "\(text) is \(classes[text] ?? "missing")")
        }
        #expect(classes["data"] == "blob")  // an empty Data is a zero-length blob, not NULL

        let stored = try await store.read { db in
            try db.rows("SELECT bool, uuid, date FROM round_trip_scalars WHERE id = 'x'").first
        }
        #expect(stored?["bool"] == .integer(1))
        #expect(stored?["uuid"] == .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(stored?["date"] == .real(3))
        let fetched = try await store.fetch(RoundTripScalars.self, id: "x")
        #expect(fetched == object)
    }

    @Test func optionalsRoundTripAsNilAndAsValues() async throws {
        let directory = try TemporaryDirectory()
        let empty = RoundTripOptionals(id: 1)
        let full = RoundTripOptionals(
            id: 2, bool: false, int: 0, int8: -128, int16: 0, int32: 7, int64: .min, uint: 0, uint8: 0, uint16: 1,
            uint32: .max, uint64: UInt64(Int64.max), double: -1.5, float: 0, string: "", date: Date(), uuid: UUID(),
            data: Data(), url: URL(string: "https://example.com/?a=1"), decimal: Decimal(string: "0.1"),
            color: .blue, priority: .normal,
            address: RoundTripAddress(street: "", zip: 0, tags: [], location: nil, since: Date(timeIntervalSince1970: 0)),
            numbers: [])
        let fetched = try await roundTrip([empty, full], in: directory)
        #expect(fetched == [empty, full])

        // Every attribute of `empty` is NULL in SQLite; every one of `full` is not, even the zero,
        // false, empty and "" values.
        let store = try await openStore(directory.path("round-trip.sqlite"), entities: roundTripEntities)
        let schema = try store.schema(of: RoundTripOptionals.self)
        let columns = schema.attributes.filter { $0.name != "id" }.map(\.column)
        let nullCounts = try await store.read { db in
            try [Int64(1), 2].map { id in
                try columns.filter { column in
                    try db.value("SELECT \"\(column)\" IS NULL FROM round_trip_optionals WHERE id = ?", [.integer(id)])
                        == .integer(1)
                }.count
            }
        }
        #expect(nullCounts == [columns.count, 0])
    }

    @Test func rawValueEnumsAndNestedCodableValuesRoundTrip() async throws {
        let directory = try TemporaryDirectory()
        let address = RoundTripAddress(street: "1 \"Infinite\" Loop", zip: 95014, tags: ["home", "ü", ""],
                                       location: RoundTripLocation(latitude: 37.331_7, longitude: -122.030_2),
                                       since: Date(timeIntervalSinceReferenceDate: 1.000_000_1))
        let objects = [
            RoundTripComposite(id: UUID(), color: .blue, priority: .urgent, level: .maximum, ratio: .third,
                               address: address, numbers: [1, -2, Int.max, Int.min], matrix: [[1.5, -0.0], [], [1e300]],
                               scores: ["a": 1.5, "ü \"q\"": -2, "": 0], byNumber: [1: "one", -7: "minus seven"],
                               addresses: [address, RoundTripAddress(street: "", zip: 0, tags: [], location: nil,
                                                                     since: Date(timeIntervalSince1970: 0))]),
            RoundTripComposite(id: UUID(), color: .red, priority: .low, level: .minimum, ratio: .half,
                               address: address, numbers: [], matrix: [], scores: [:], byNumber: [:], addresses: []),
        ]
        let fetched = try await roundTrip(objects, in: directory)
        #expect(fetched == objects.sorted { $0.id < $1.id })

        let store = try await openStore(directory.path("round-trip.sqlite"), entities: roundTripEntities)
        let urgent = try #require(objects.first)
        let stored = try await store.read { db in
            try db.rows("SELECT color, priority, level, ratio, address, numbers FROM round_trip_composites WHERE id = ?",
                        [.text(urgent.id.uuidString)]).first
        }
        // Enums are stored as their raw values, nested values as JSON text.
        #expect(stored?["color"] == .text("bleu \"quoted\" ü"))
        #expect(stored?["priority"] == .integer(9_000_000_000))
        #expect(stored?["level"] == .integer(255))
        #expect(stored?["ratio"] == .real(RoundTripRatio.third.rawValue))
        #expect(stored?["numbers"] == .text("[1,-2,\(Int.max),\(Int.min)]"))
        guard case .text(let json)? = stored?["address"] else {
            Issue.record("address is not stored as text: \(String(describing: stored?["address"]))")
            return
        }
        #expect(try JSONDecoder().decode(RoundTripAddress.self, from: Data(json.utf8)) == address)

        // Raw values are also what filters compare with.
        let blue = try await store.fetch(Query<RoundTripComposite>(where: Attribute("color") == RoundTripColor.blue.rawValue))
        #expect(blue.map(\.id) == [urgent.id])
        let low = try await store.count(Query<RoundTripComposite>(where: Attribute("priority") < 0))
        #expect(low == 1)
    }

    @Test func filtersFindStoredValuesByEquality() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("filters.sqlite"), entities: roundTripEntities)
        var target = RoundTripScalars.zero("target")
        target.int64 = .min
        target.uint64 = UInt64(Int64.max)
        target.double = -0.0
        target.date = Date(timeIntervalSinceReferenceDate: 0.000_001)
        target.uuid = UUID()
        target.data = Data([0, 1, 2])
        target.url = URL(string: "https://example.com/target")!
        target.decimal = Decimal(string: "3.14")!
        target.string = "ünïcødé 👍"
        var other = RoundTripScalars.zero("other")
        other.date = Date(timeIntervalSinceReferenceDate: 0.000_002)
        var changes = ChangeSet()
        changes.insert(target)
        changes.insert(other)
        try await store.submit(changes).committed()

        let filters: [(String, Filter)] = [
            ("int64", Attribute("int64") == Int64.min),
            ("uint64", Attribute("uint64") == UInt64(Int64.max)),
            ("date", Attribute("date") == target.date),
            ("uuid", Attribute("uuid") == target.uuid),
            ("data", Attribute("data") == target.data),
            ("url", Attribute("url") == target.url),
            ("decimal", Attribute("decimal") == target.decimal),
            ("string", Attribute("string") == target.string),
        ]
        for (name, filter) in filters {
            let ids = try await store.ids(Query<RoundTripScalars>(where: filter))
            #expect(ids == ["target"], "filter on \(name) found \(ids)")
        }
    }

    @Test func schemaReportsTheAttributeTypeOfEveryAttribute() async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("schema.sqlite"), entities: roundTripEntities)

        func types<E: Entity>(_ type: E.Type) throws -> [String: AttributeType] {
            Dictionary(uniqueKeysWithValues: try store.schema(of: type).attributes.map { ($0.name, $0.type) })
        }
        let scalarTypes: [String: AttributeType] = [
            "id": .text, "bool": .bool, "int": .integer, "int8": .integer, "int16": .integer, "int32": .integer,
            "int64": .integer, "uint": .integer, "uint8": .integer, "uint16": .integer, "uint32": .integer,
            "uint64": .integer, "double": .real, "float": .real, "string": .text, "date": .date, "uuid": .uuid,
            "data": .data, "url": .url, "decimal": .decimal,
        ]
        #expect(try types(RoundTripScalars.self) == scalarTypes)
        var optionalTypes = scalarTypes
        optionalTypes["id"] = .integer
        optionalTypes["color"] = .text
        optionalTypes["priority"] = .integer
        optionalTypes["address"] = .json
        optionalTypes["numbers"] = .json
        #expect(try types(RoundTripOptionals.self) == optionalTypes)
        #expect(try types(RoundTripComposite.self) == [
            "id": .uuid, "color": .text, "priority": .integer, "level": .integer, "ratio": .real, "address": .json,
            "numbers": .json, "matrix": .json, "scores": .json, "byNumber": .json, "addresses": .json,
        ])

        // Optionality, order (declaration order) and the primary key.
        let scalars = try store.schema(of: RoundTripScalars.self)
        #expect(scalars.attributes.map(\.name) == ["id", "bool", "int", "int8", "int16", "int32", "int64", "uint",
                                                   "uint8", "uint16", "uint32", "uint64", "double", "float", "string",
                                                   "date", "uuid", "data", "url", "decimal"])
        #expect(scalars.attributes.allSatisfy { !$0.isOptional })
        #expect(scalars.primaryKey.name == "id")
        let optionals = try store.schema(of: RoundTripOptionals.self)
        #expect(optionals.attributes.filter(\.isOptional).count == optionals.attributes.count - 1)
        #expect(optionals.primaryKey.isOptional == false)

        // The SQLite column types follow the attribute types.
        let columnTypes = try await store.read { db in
            Dictionary(uniqueKeysWithValues: try db.columns(in: "round_trip_scalars").map { ($0.name, $0.type) })
        }
        #expect(columnTypes["bool"] == "INTEGER")
        #expect(columnTypes["uint64"] == "INTEGER")
        #expect(columnTypes["double"] == "REAL")
        #expect(columnTypes["date"] == "REAL")
        #expect(columnTypes["uuid"] == "TEXT")
        #expect(columnTypes["decimal"] == "TEXT")
        #expect(columnTypes["data"] == "BLOB")
    }

    @Test(arguments: [
        ("double NaN", RoundTripUnstorable(id: 1, double: .nan, float: 1, maybeDouble: nil, uint64: 1, uint: 1,
                                           location: RoundTripLocation(latitude: 0, longitude: 0)), "double"),
        ("float NaN", RoundTripUnstorable(id: 1, double: 1, float: .nan, maybeDouble: nil, uint64: 1, uint: 1,
                                          location: RoundTripLocation(latitude: 0, longitude: 0)), "float"),
        ("optional NaN", RoundTripUnstorable(id: 1, double: 1, float: 1, maybeDouble: -.nan, uint64: 1, uint: 1,
                                             location: RoundTripLocation(latitude: 0, longitude: 0)), "maybeDouble"),
        ("UInt64 above Int64.max", RoundTripUnstorable(id: 1, double: 1, float: 1, maybeDouble: nil,
                                                       uint64: UInt64(Int64.max) + 1, uint: 1,
                                                       location: RoundTripLocation(latitude: 0, longitude: 0)), "uint64"),
        ("UInt.max", RoundTripUnstorable(id: 1, double: 1, float: 1, maybeDouble: nil, uint64: 1, uint: .max,
                                         location: RoundTripLocation(latitude: 0, longitude: 0)), "uint"),
        ("NaN in JSON", RoundTripUnstorable(id: 1, double: 1, float: 1, maybeDouble: nil, uint64: 1, uint: 1,
                                            location: RoundTripLocation(latitude: .nan, longitude: 0)), "location"),
    ])
    private func unstorableValueIsRefusedAtSubmitWithInvalidValue(
        _ label: String, _ object: RoundTripUnstorable, _ attribute: String
    ) async throws {
        let directory = try TemporaryDirectory()
        let store = try await openStore(directory.path("invalid.sqlite"), entities: roundTripEntities)

        // Rows are encoded when the change set is submitted: the bad object is refused there,
        // whole change set with it (the valid object beside it is not kept), nothing accepted ...
        var bad = ChangeSet()
        bad.insert(RoundTripUnstorable.valid(2))
        bad.insert(object)
        let error = #expect(throws: StrataError.self, "\(label)") { try store.submit(bad) }
        #expect(error?.code == .invalidValue, "\(label): \(String(describing: error))")
        #expect(error?.entity == "RoundTripUnstorable", "\(label)")
        #expect(error?.objectID == "1", "\(label)")
        #expect(error?.attribute == attribute, "\(label): \(String(describing: error))")
        #expect(store.pendingCount == 0, "nothing was accepted")
        // ... and the next change set commits.
        var good = ChangeSet()
        good.insert(RoundTripUnstorable.valid(3))
        try await store.submit(good).committed()
        #expect(try await store.allIDs(RoundTripUnstorable.self) == [3])
        #expect(store.pendingCount == 0)
        #expect(try await store.integrityProblems().isEmpty)
    }
}
