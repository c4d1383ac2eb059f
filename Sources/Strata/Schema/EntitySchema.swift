import Foundation

/// How an attribute is stored.
public enum AttributeType: String, Sendable, Codable, Hashable {
    case bool, integer, real, text, date, uuid, data, url, decimal, json

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
    public var type: AttributeType
    public var isOptional: Bool
    /// The column default for rows that existed before the attribute was added.
    public var defaultValue: DatabaseValue

    enum CodingKeys: String, CodingKey { case name, column, type, isOptional, defaultSQL }

    public init(name: String, column: String, type: AttributeType, isOptional: Bool, defaultValue: DatabaseValue) {
        self.name = name
        self.column = column
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        column = try container.decode(String.self, forKey: .column)
        type = try container.decode(AttributeType.self, forKey: .type)
        isOptional = try container.decode(Bool.self, forKey: .isOptional)
        defaultValue = .null
    }

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
    public var name: String
    public var table: String
    public var attributes: [AttributeSchema]
    /// The index of the primary key in ``attributes``.
    public var primaryKeyIndex: Int
    public var indexes: [EntityIndex]
    public var fullTextAttributes: [String]
    public var isResident: Bool
    /// ``Entity/archiveVersion``: part of the entity's snapshot fingerprint.
    public var archiveVersion: Int

    /// Attribute name → position in ``attributes`` (and in every row Strata builds).
    private var positions: [String: Int] = [:]

    enum CodingKeys: String, CodingKey {
        case name, table, attributes, primaryKeyIndex, indexes, fullTextAttributes, isResident, archiveVersion
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
        self.archiveVersion = archiveVersion
        buildPositions()
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decode(String.self, forKey: .name)
        table = try container.decode(String.self, forKey: .table)
        attributes = try container.decode([AttributeSchema].self, forKey: .attributes)
        primaryKeyIndex = try container.decode(Int.self, forKey: .primaryKeyIndex)
        indexes = try container.decode([EntityIndex].self, forKey: .indexes)
        fullTextAttributes = try container.decode([String].self, forKey: .fullTextAttributes)
        isResident = try container.decode(Bool.self, forKey: .isResident)
        archiveVersion = try container.decodeIfPresent(Int.self, forKey: .archiveVersion) ?? 1
        buildPositions()
    }

    private mutating func buildPositions() {
        positions = Dictionary(attributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    public var primaryKey: AttributeSchema { attributes[primaryKeyIndex] }

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

extension String {
    /// The string as an SQL identifier, safely double-quoted.
    var quotedIdentifier: String { "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}
