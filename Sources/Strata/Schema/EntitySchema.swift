import Foundation

/// How an attribute is stored.
public enum AttributeType: String, Sendable, Codable, Hashable {
    /// `Bool`, stored as INTEGER 0 or 1.
    case bool
    /// Any integer type, stored as a 64-bit INTEGER.
    case integer
    /// `Double` or `Float`, stored as REAL.
    case real
    /// `String`, stored as TEXT.
    case text
    /// `Date`, stored as REAL seconds since 2001-01-01 00:00:00 UTC.
    case date
    /// `UUID`, stored as its uppercase TEXT form.
    case uuid
    /// `Data`, stored as a BLOB.
    case data
    /// `URL`, stored as its absolute string (TEXT).
    case url
    /// `Decimal`, stored as its exact decimal TEXT.
    case decimal
    /// Any other `Codable` value, stored as JSON TEXT.
    case json

    /// The class numbers take in this type's column (its affinity: ``sqlType``).
    var numberClass: NumberClass {
        switch sqlType {
        case "INTEGER": return .integer
        case "REAL": return .real
        default: return .none
        }
    }

    /// The SQLite column type (and so its affinity).
    var sqlType: String {
        switch self {
        case .bool, .integer: return "INTEGER"
        case .real, .date: return "REAL"
        case .text, .uuid, .url, .decimal, .json: return "TEXT"
        case .data: return "BLOB"
        }
    }

    /// The value that fills a new non-optional column for rows that already exist.
    var zeroValue: DatabaseValue {
        switch self {
        case .bool, .integer: return .integer(0)
        case .real, .date: return .real(0)
        case .text, .url, .decimal: return .text("")
        case .uuid: return .text(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)).uuidString)
        case .json: return .text("null")
        case .data: return .blob(Data())
        }
    }
}

/// One stored attribute of an entity.
public struct AttributeSchema: Sendable, Hashable, Codable {
    /// The coding key.
    public var name: String
    /// The SQLite column.
    public var column: String
    /// How the attribute is stored.
    public var type: AttributeType
    /// Whether the attribute may be `nil` (its column NULL).
    public var isOptional: Bool
    /// The column default for rows that existed before the attribute was added.
    public var defaultValue: DatabaseValue

    enum CodingKeys: String, CodingKey { case name, column, type, isOptional, defaultSQL }

    /// An attribute stored in `column` as `type`.
    public init(name: String, column: String, type: AttributeType, isOptional: Bool, defaultValue: DatabaseValue) {
        self.name = name
        self.column = column
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
    }

    /// Decodes an attribute as `strata_entities` records it (the default value is not read back).
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        column = try container.decode(String.self, forKey: .column)
        type = try container.decode(AttributeType.self, forKey: .type)
        isOptional = try container.decode(Bool.self, forKey: .isOptional)
        defaultValue = .null
    }

    /// Encodes the attribute as `strata_entities` records it: the default as SQL text (`defaultSQL`).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(column, forKey: .column)
        try container.encode(type, forKey: .type)
        try container.encode(isOptional, forKey: .isOptional)
        try container.encode(defaultValue.description, forKey: .defaultSQL)
    }
}

/// Everything Strata knows about an entity: its table, attributes, key, indexes and full-text
/// attributes. Built once per type by reflecting its `Codable` conformance.
public struct EntitySchema: Sendable, Hashable, Codable {
    /// The entity's name (``Entity/entityName``).
    public var name: String
    /// The SQLite table (``Entity/tableName``).
    public var table: String
    /// The stored attributes, in column order.
    public var attributes: [AttributeSchema]
    /// The index of the primary key in ``attributes``.
    public var primaryKeyIndex: Int
    /// The indexes the entity declares (``Entity/indexes``).
    public var indexes: [EntityIndex]
    /// The attributes indexed for full-text search (``Entity/fullTextAttributes``).
    public var fullTextAttributes: [String]
    /// Whether the main context holds every object (``Entity/residency`` is `.resident`).
    public var isResident: Bool
    /// How much of the entity the main context keeps (``Entity/residency``). Declaration only:
    /// not recorded in the store (a schema read from a file has `.resident` or `.keptWhenRead`,
    /// from ``isResident``), not part of any fingerprint.
    public var residency: Residency
    /// ``Entity/archiveVersion``: part of the entity's snapshot fingerprint.
    public var archiveVersion: Int
    /// The order a snapshot archives the objects in (``Entity/snapshotOrder``); recorded only
    /// when there is one, so that the records of entities without one are as they were.
    public var snapshotOrder: [SortKey] = []
    /// The attributes a warm start leaves compressed until first read
    /// (``Entity/deferredAttributes``), in schema order; recorded only when there are some.
    public var deferredAttributes: [String] = []

    /// How the declaration says to evolve a stored schema (``Entity/formerAttributeNames``,
    /// ``Entity/discardedAttributes``, the attributes with an ``Entity/attributeDefaults``
    /// entry). Declaration only: not recorded in the store, not part of any fingerprint.
    struct Evolution: Sendable, Hashable {
        var formerNames: [String: String] = [:]
        var discarded: Set<String> = []
        var explicitDefaults: Set<String> = []
    }
    var evolution = Evolution()

    /// Attribute name → position in ``attributes`` (and in every row Strata builds).
    private var positions: [String: Int] = [:]

    enum CodingKeys: String, CodingKey {
        case name, table, attributes, primaryKeyIndex, indexes, fullTextAttributes, isResident, archiveVersion, snapshotOrder
        case deferredAttributes
    }

    init(name: String, table: String, attributes: [AttributeSchema], primaryKeyIndex: Int,
         indexes: [EntityIndex], fullTextAttributes: [String], isResident: Bool, archiveVersion: Int = 1) {
        self.name = name
        self.table = table
        self.attributes = attributes
        self.primaryKeyIndex = primaryKeyIndex
        self.indexes = indexes
        self.fullTextAttributes = fullTextAttributes
        self.isResident = isResident
        self.residency = isResident ? .resident : .keptWhenRead
        self.archiveVersion = archiveVersion
        buildPositions()
    }

    /// Decodes a schema as `strata_entities` records it.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        table = try container.decode(String.self, forKey: .table)
        attributes = try container.decode([AttributeSchema].self, forKey: .attributes)
        primaryKeyIndex = try container.decode(Int.self, forKey: .primaryKeyIndex)
        indexes = try container.decode([EntityIndex].self, forKey: .indexes)
        fullTextAttributes = try container.decode([String].self, forKey: .fullTextAttributes)
        isResident = try container.decode(Bool.self, forKey: .isResident)
        residency = isResident ? .resident : .keptWhenRead
        archiveVersion = try container.decodeIfPresent(Int.self, forKey: .archiveVersion) ?? 1
        snapshotOrder = try container.decodeIfPresent([SortKey].self, forKey: .snapshotOrder) ?? []
        buildPositions()
        deferredAttributes = try container.decodeIfPresent([String].self, forKey: .deferredAttributes) ?? []
    }

    /// Encodes the schema as `strata_entities` records it (the snapshot order and the deferred
    /// attributes only when there are some).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(table, forKey: .table)
        try container.encode(attributes, forKey: .attributes)
        try container.encode(primaryKeyIndex, forKey: .primaryKeyIndex)
        try container.encode(indexes, forKey: .indexes)
        try container.encode(fullTextAttributes, forKey: .fullTextAttributes)
        try container.encode(isResident, forKey: .isResident)
        try container.encode(archiveVersion, forKey: .archiveVersion)
        if !snapshotOrder.isEmpty { try container.encode(snapshotOrder, forKey: .snapshotOrder) }
        if !deferredAttributes.isEmpty { try container.encode(deferredAttributes, forKey: .deferredAttributes) }
    }

    private mutating func buildPositions() {
        positions = Dictionary(attributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// The primary-key attribute (`id`).
    public var primaryKey: AttributeSchema { attributes[primaryKeyIndex] }

    /// Whether the attribute at `position` is one of ``deferredAttributes``.
    func isDeferred(_ position: Int) -> Bool {
        !deferredAttributes.isEmpty && deferredAttributes.contains(attributes[position].name)
    }

    /// The position of an attribute, by coding key.
    public func position(of attribute: String) -> Int? { positions[attribute] }

    func requirePosition(of attribute: String) throws -> Int {
        guard let position = positions[attribute] else {
            throw StrataError(.unknownAttribute, "entity \(name) has no attribute '\(attribute)' "
                + "(it has: \(attributes.map(\.name).joined(separator: ", ")))", entity: name, attribute: attribute)
        }
        return position
    }

    /// The name of the FTS5 table that indexes ``fullTextAttributes``.
    var fullTextTable: String { table + "_fts" }

    func indexName(_ index: EntityIndex) -> String {
        index.name ?? "\(table)_\(index.attributes.joined(separator: "_"))"
    }
}
