import Foundation

/// A type of object Strata stores: a `Codable` value type with a stable identifier.
///
/// Strata reads the attributes from the type's `Codable` conformance (each coding key is an
/// attribute and a column) and the rest of the declaration from static properties, all optional:
///
/// ```swift
/// struct Article: Entity {
///     var id: String
///     var feedID: Int64
///     var title: String
///     var summary: String?
///     var published: Date
///     var isRead = false
///
///     static let tableName = "articles"
///     static let columnNames = ["id": "uniqueID"]
///     static let indexes = [EntityIndex(["feedID", "isRead"])]
///     static let fullTextAttributes = ["title", "summary"]
/// }
/// ```
///
/// Supported attribute types: `Bool`, every integer width, `Double`, `Float`, `String`, `Date`,
/// `UUID`, `Data`, `URL`, `Decimal`, optionals of these, `RawRepresentable` enums of these (they
/// must be `CaseIterable` so that Strata can read the schema without a stored value), and any
/// other `Codable` value, stored as JSON text. Entities are values: a copy handed to another
/// thread or a network call is detached from the store by construction.
public protocol Entity: Codable, Sendable, Identifiable where ID: EntityIdentifier {
    /// The entity's name in the store, change sets and the CLI. Defaults to the type name.
    static var entityName: String { get }
    /// The SQLite table. Defaults to ``entityName``.
    static var tableName: String { get }
    /// Column names that differ from attribute (coding key) names: `["id": "uniqueID"]`.
    static var columnNames: [String: String] { get }
    /// Indexes to create and keep, single or multi-column, unique or not.
    static var indexes: [EntityIndex] { get }
    /// String attributes indexed for full-text search (an FTS5 table kept in sync by triggers).
    static var fullTextAttributes: [String] { get }
    /// Values for non-optional attributes added to a table that already has rows: the value
    /// every existing row gets. A non-optional attribute added without one to a table with rows
    /// is refused at open (``StrataError/Code/incompatibleSchema``) rather than given a value
    /// nobody chose; a new table's columns default to their type's zero value (0, false, "",
    /// empty data).
    static var attributeDefaults: [String: DatabaseValue] { get }
    /// Former names of renamed attributes, new coding key → name in the store:
    /// `["headline": "title"]`. At open, a stored attribute under its former name becomes the
    /// new one and keeps every value (its column is renamed), like SwiftData's `originalName`.
    /// Keep an entry while stores written before the rename may still be opened.
    static var formerAttributeNames: [String: String] { get }
    /// Attributes removed from the entity whose stored values may be discarded. A removed
    /// attribute that still holds values and is not listed makes the open fail with
    /// ``StrataError/Code/incompatibleSchema``, so that no value disappears unasked.
    static var discardedAttributes: Set<String> { get }
    /// Whether the main context holds every object of this entity in memory at all times
    /// (for small, always-needed sets such as feeds or tags): `residency == .resident`.
    static var isResident: Bool { get }
    /// How much of this entity the main context keeps (``Residency``). Default: `.resident` when
    /// ``isResident`` is true, else `.keptWhenRead`.
    static var residency: Residency { get }
    /// The version of the entity's archived form, like an NSCoding class version. Bump it when
    /// a snapshot written by the previous version must not be decoded by this one: such a
    /// snapshot is then refused clearly (``SnapshotRejection/schemaChanged``) and the store cold-starts.
    static var archiveVersion: Int { get }
    /// The order a snapshot stores this entity's objects in (ties by primary key, ascending), so
    /// that a warm start can show the first screen of a list in this order from the archive's
    /// first chunk, before the rest is read: see
    /// ``Store/openWarm(at:snapshot:entities:migrations:configuration:firstScreen:showing:)``.
    /// The main context also keeps its objects sorted in this order, so that a query ordered
    /// this way with a limit reads its first matches and stops (no index narrowing its filter
    /// needed): "the 50 newest unread" is a walk from the newest, not a sort of every match.
    /// Name the order of the list the app opens on: `[Attribute("published").descending]`.
    /// Defaults to none (primary-key order). Changing it makes existing snapshots refused once
    /// (``SnapshotRejection/schemaChanged``).
    static var snapshotOrder: [SortKey] { get }
    /// Text and blob attributes a warm start leaves compressed until one of their values is
    /// first read — what a list does not show, such as an article's summary or its URL:
    /// `["summary", "url"]`. A snapshot keeps their bytes in frames of their own, checked at
    /// load (``Snapshot/checksum(ofChunk:)``) and decompressed a chunk at a time (5,000 objects)
    /// on the first read of any of its values, so that the main context holds its objects
    /// without waiting for them. The attributes must be stored as TEXT or BLOB and must not be
    /// the primary key, part of an index or of ``snapshotOrder`` (the main context's in-memory
    /// indexes read every value at launch). Defaults to none. Changing it makes existing
    /// snapshots refused once (``SnapshotRejection/schemaChanged``).
    static var deferredAttributes: [String] { get }

    /// Writes the object's attribute values, in schema order, for Strata's hot paths (saves,
    /// merges, bulk updates). The default goes through `Encodable`; implement it by hand (or have
    /// it generated) together with ``init(row:)`` to skip runtime `Codable`. See ``RowWriter``.
    func encode(row: inout RowWriter) throws
    /// Reads an object from its attribute values, in schema order (fetches, warm and cold
    /// starts, merges). The default goes through `Decodable`. See ``RowReader``.
    init(row: inout RowReader) throws
}

extension Entity {
    public static var entityName: String { DefaultEntityName.of(Self.self) }
    public static var tableName: String { entityName }
    public static var columnNames: [String: String] { [:] }
    public static var indexes: [EntityIndex] { [] }
    public static var fullTextAttributes: [String] { [] }
    public static var attributeDefaults: [String: DatabaseValue] { [:] }
    public static var formerAttributeNames: [String: String] { [:] }
    public static var discardedAttributes: Set<String> { [] }
    public static var isResident: Bool { false }
    public static var residency: Residency { isResident ? .resident : .keptWhenRead }
    public static var archiveVersion: Int { 1 }
    public static var snapshotOrder: [SortKey] { [] }
    public static var deferredAttributes: [String] { [] }
}

/// The default ``Entity/entityName``: the type's name. `String(describing:)` of a type reflects
/// and prints the metatype, and the name is asked for several times per saved object, so each
/// type's name is computed once.
enum DefaultEntityName {
    private static let names = Locked<[ObjectIdentifier: String]>([:])

    static func of(_ type: Any.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = names.withLock({ $0[key] }) { return name }
        let name = String(describing: type)
        names.withLock { $0[key] = name }
        return name
    }
}

/// A type usable as an entity's primary key: `String`, `Int`, `Int64` or `UUID`.
public protocol EntityIdentifier: DatabaseValueConvertible, Hashable, Codable, Comparable {}

extension String: EntityIdentifier {}
extension Int64: EntityIdentifier {}
extension Int: EntityIdentifier {}
extension UUID: EntityIdentifier {}

/// An index on one or more attributes of an entity.
public struct EntityIndex: Sendable, Hashable, Codable {
    /// The attributes (coding keys), in index order.
    public var attributes: [String]
    /// Whether two objects may not share the same values.
    public var isUnique: Bool
    /// The index name; derived from the table and attributes when nil.
    public var name: String?

    /// An index on `attributes` (coding keys), unique or not, named `name` or after the table and
    /// attributes.
    public init(_ attributes: [String], unique: Bool = false, name: String? = nil) {
        self.attributes = attributes
        self.isUnique = unique
        self.name = name
    }
}
