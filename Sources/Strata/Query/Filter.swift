import Foundation

/// A condition on an entity's attributes, evaluated either as SQL (values always bound, never
/// interpolated) or in memory, with the same result: SQLite's comparison rules and its
/// three-valued NULL logic are reproduced exactly by the in-memory evaluator.
///
/// ```swift
/// let unread = Attribute("feedID") == 7 && Attribute("isRead") == false
/// let recent = Attribute("published") >= Date().addingTimeInterval(-86_400)
/// let search = Filter.matches("swift concurr*")   // full text, on an entity's FTS attributes
/// let articles = try await store.fetch(Query<Article>(where: unread && recent))
/// ```
public struct Filter: Sendable, Hashable, CustomStringConvertible {
    indirect enum Node: Sendable, Hashable {
        case constant(Bool)
        case compare(String, Comparison, DatabaseValue)
        case isIn(String, [DatabaseValue])
        case isNull(String)
        case hasPrefix(String, String)
        case contains(String, String)
        case matches(String)
        case and([Node])
        case or([Node])
        case not(Node)
    }

    /// The comparison operators.
    public enum Comparison: String, Sendable, Hashable {
        /// `=`
        case equal = "="
        /// `<>`
        case notEqual = "<>"
        /// `<`
        case less = "<"
        /// `<=`
        case lessOrEqual = "<="
        /// `>`
        case greater = ">"
        /// `>=`
        case greaterOrEqual = ">="
    }

    let node: Node

    init(_ node: Node) { self.node = node }

    /// Matches every object.
    public static let all = Filter(.constant(true))
    /// Matches no object.
    public static let none = Filter(.constant(false))

    /// Full-text match over the entity's ``Entity/fullTextAttributes``: every word of `text` must
    /// occur; a word ending in `*` matches as a prefix. Case and Latin diacritics are ignored.
    public static func matches(_ text: String) -> Filter { Filter(.matches(text)) }

    /// Both filters: SQL's `AND`.
    public static func && (lhs: Filter, rhs: Filter) -> Filter { Filter(.and([lhs.node, rhs.node])) }
    /// Either filter: SQL's `OR`.
    public static func || (lhs: Filter, rhs: Filter) -> Filter { Filter(.or([lhs.node, rhs.node])) }
    /// The negation: SQL's `NOT`. Like SQL, `!(attribute == value)` does not match a NULL attribute.
    public static prefix func ! (filter: Filter) -> Filter { Filter(.not(filter.node)) }

    /// All of `filters` (true when empty).
    public static func all(_ filters: [Filter]) -> Filter { Filter(.and(filters.map(\.node))) }
    /// Any of `filters` (false when empty).
    public static func any(_ filters: [Filter]) -> Filter { Filter(.or(filters.map(\.node))) }

    /// The filter in a SQL-like notation, for logs: `(feedID = 7 AND isRead = 0)`.
    public var description: String { Self.describe(node) }

    private static func describe(_ node: Node) -> String {
        switch node {
        case .constant(let value): return value ? "TRUE" : "FALSE"
        case .compare(let name, let op, let value): return "\(name) \(op.rawValue) \(value)"
        case .isIn(let name, let values): return "\(name) IN (\(values.map(\.description).joined(separator: ", ")))"
        case .isNull(let name): return "\(name) IS NULL"
        case .hasPrefix(let name, let prefix): return "\(name) BEGINSWITH \(DatabaseValue.text(prefix))"
        case .contains(let name, let text): return "\(name) CONTAINS \(DatabaseValue.text(text))"
        case .matches(let text): return "MATCHES \(DatabaseValue.text(text))"
        case .and(let nodes): return "(" + nodes.map(describe).joined(separator: " AND ") + ")"
        case .or(let nodes): return "(" + nodes.map(describe).joined(separator: " OR ") + ")"
        case .not(let node): return "NOT " + describe(node)
        }
    }
}

/// A reference to an attribute by its coding key, for building ``Filter``s and sort keys.
public struct Attribute: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The attribute's coding key.
    public let name: String

    /// An attribute by its coding key.
    public init(_ name: String) { self.name = name }
    /// An attribute by its coding key, written as a string literal.
    public init(stringLiteral name: String) { self.name = name }

    /// `attribute IS NULL`.
    public var isNull: Filter { Filter(.isNull(name)) }
    /// `attribute IS NOT NULL`.
    public var isNotNull: Filter { !isNull }

    /// Whether the attribute equals one of `values`.
    public func `in`<S: Sequence>(_ values: S) -> Filter where S.Element: DatabaseValueConvertible {
        Filter(.isIn(name, values.map(\.databaseValue)))
    }
    /// Whether the string attribute starts with `prefix` (byte for byte, case-sensitive).
    public func hasPrefix(_ prefix: String) -> Filter { Filter(.hasPrefix(name, prefix)) }
    /// Whether the string attribute contains `text` (byte for byte, case-sensitive).
    public func contains(_ text: String) -> Filter { Filter(.contains(name, text)) }

    /// Sorts ascending by this attribute.
    public var ascending: SortKey { SortKey(name, ascending: true) }
    /// Sorts descending by this attribute.
    public var descending: SortKey { SortKey(name, ascending: false) }

    private func compare(_ op: Filter.Comparison, _ value: some DatabaseValueConvertible) -> Filter {
        let value = value.databaseValue
        if value.isNull, op == .equal { return isNull }
        if value.isNull, op == .notEqual { return isNotNull }
        return Filter(.compare(name, op, value))
    }

    /// Equality; comparing with `nil` means `IS NULL`.
    public static func == (lhs: Attribute, rhs: some DatabaseValueConvertible) -> Filter { lhs.compare(.equal, rhs) }
    /// Inequality; comparing with `nil` means `IS NOT NULL`. Like SQL, a NULL attribute matches neither.
    public static func != (lhs: Attribute, rhs: some DatabaseValueConvertible) -> Filter { lhs.compare(.notEqual, rhs) }

    /// Whether the attribute holds no value: SQL's `IS NULL`, true or false for every row, never
    /// unknown.
    ///
    /// ```swift
    /// let withoutSummary = try await store.fetch(Query<Article>(where: Attribute("summary") == nil))
    /// ```
    ///
    /// The same filter as ``Attribute/isNull``: rendered as `"summary" IS NULL` and evaluated in
    /// memory with the same meaning.
    ///
    /// - Parameters:
    ///   - lhs: The attribute, usually an optional one.
    ///   - rhs: The `nil` literal.
    /// - Returns: A filter that matches the objects whose attribute is `nil`.
    public static func == (lhs: Attribute, rhs: _OptionalNilComparisonType) -> Filter { lhs.isNull }

    /// Whether the attribute holds a value: SQL's `IS NOT NULL`, true or false for every row,
    /// never unknown.
    ///
    /// ```swift
    /// let withSummary = try await store.fetch(Query<Article>(where: Attribute("summary") != nil))
    /// ```
    ///
    /// The same filter as ``Attribute/isNotNull``: rendered as `NOT ("summary" IS NULL)` and
    /// evaluated in memory with the same meaning.
    ///
    /// - Parameters:
    ///   - lhs: The attribute, usually an optional one.
    ///   - rhs: The `nil` literal.
    /// - Returns: A filter that matches the objects whose attribute is not `nil`.
    public static func != (lhs: Attribute, rhs: _OptionalNilComparisonType) -> Filter { lhs.isNotNull }

    /// Less than, in SQLite's order. Like SQL, a NULL attribute matches no ordering comparison.
    public static func < (lhs: Attribute, rhs: some DatabaseValueConvertible) -> Filter { lhs.compare(.less, rhs) }
    /// Less than or equal, in SQLite's order.
    public static func <= (lhs: Attribute, rhs: some DatabaseValueConvertible) -> Filter { lhs.compare(.lessOrEqual, rhs) }
    /// Greater than, in SQLite's order.
    public static func > (lhs: Attribute, rhs: some DatabaseValueConvertible) -> Filter { lhs.compare(.greater, rhs) }
    /// Greater than or equal, in SQLite's order.
    public static func >= (lhs: Attribute, rhs: some DatabaseValueConvertible) -> Filter { lhs.compare(.greaterOrEqual, rhs) }
}

/// What to fetch: an entity, a filter, a sort order, and a window.
///
/// ```swift
/// let query = Query<Article>(where: Attribute("isRead") == false,
///                            sortedBy: [Attribute("published").descending], limit: 50)
/// ```
public struct Query<E: Entity>: Sendable, Hashable {
    /// Which objects match.
    public var filter: Filter
    /// The order, most significant key first; ties (and an empty list) are ordered by primary key.
    public var sortKeys: [SortKey]
    /// The most objects to return, or nil for all of them.
    public var limit: Int?
    /// How many matching objects to skip, in the query's order.
    public var offset: Int

    /// A query for objects of `type` matching `filter`, in `sortKeys` order, skipping `offset`
    /// and returning at most `limit`.
    public init(_ type: E.Type = E.self, where filter: Filter = .all, sortedBy sortKeys: [SortKey] = [],
                limit: Int? = nil, offset: Int = 0) {
        self.filter = filter
        self.sortKeys = sortKeys
        self.limit = limit
        self.offset = offset
    }
}
