import Foundation

/// A ``Filter`` checked against one entity's schema: attribute names resolved to positions and
/// values checked against attribute types. It renders to SQL and evaluates rows in memory with
/// SQLite's semantics (NULL is "unknown": `nil` here).
struct ResolvedFilter: Sendable, Hashable {
    indirect enum Node: Sendable, Hashable {
        case constant(Bool)
        case compare(Int, Filter.Comparison, DatabaseValue)
        case isIn(Int, InList)
        case isNull(Int)
        case hasPrefix(Int, String)
        case contains(Int, String)
        case matches([FullTextTerm])
        case and([Node])
        case or([Node])
        case not(Node)
    }

    let node: Node
    let schema: EntitySchema

    init(_ filter: Filter, schema: EntitySchema) throws {
        self.schema = schema
        self.node = try Self.resolve(filter.node, schema)
    }

    /// A filter made of an already resolved node.
    init(node: Node, schema: EntitySchema) {
        self.node = node
        self.schema = schema
    }

    var isAlwaysTrue: Bool { node == .constant(true) }

    private static func resolve(_ node: Filter.Node, _ schema: EntitySchema) throws -> Node {
        switch node {
        case .constant(let value): return .constant(value)
        case .compare(let name, let op, let value):
            let position = try schema.requirePosition(of: name)
            return .compare(position, op, try checked(value, schema, position))
        case .isIn(let name, let values):
            let position = try schema.requirePosition(of: name)
            return .isIn(position, InList(try values.map { try checked($0, schema, position) }))
        case .isNull(let name): return .isNull(try schema.requirePosition(of: name))
        case .hasPrefix(let name, let prefix):
            return .hasPrefix(try textPosition(name, schema), prefix)
        case .contains(let name, let text):
            return .contains(try textPosition(name, schema), text)
        case .matches(let text):
            guard !schema.fullTextAttributes.isEmpty else {
                throw StrataError(.unknownAttribute, "entity \(schema.name) declares no full-text attributes",
                                  entity: schema.name)
            }
            return .matches(FullText.terms(of: text))
        case .and(let nodes): return .and(try nodes.map { try resolve($0, schema) })
        case .or(let nodes): return .or(try nodes.map { try resolve($0, schema) })
        case .not(let node): return .not(try resolve(node, schema))
        }
    }

    private static func textPosition(_ name: String, _ schema: EntitySchema) throws -> Int {
        let position = try schema.requirePosition(of: name)
        guard schema.attributes[position].type.sqlType == "TEXT" else {
            throw StrataError(.invalidValue, "\(schema.name).\(name) is not text; prefix and contains need text",
                              entity: schema.name, attribute: name)
        }
        return position
    }

    /// Values must have the storage class of the attribute (numbers for numeric attributes, text
    /// for text, blobs for data), so that SQLite applies no affinity conversion that the
    /// in-memory evaluator would have to imitate.
    static func checked(_ value: DatabaseValue, _ schema: EntitySchema, _ position: Int) throws -> DatabaseValue {
        let attribute = schema.attributes[position]
        let fits: Bool
        switch (attribute.type.sqlType, value) {
        case (_, .null): fits = true
        case ("INTEGER", .integer), ("INTEGER", .real), ("REAL", .integer), ("REAL", .real): fits = true
        case ("TEXT", .text), ("BLOB", .blob): fits = true
        default: fits = false
        }
        guard fits else {
            throw StrataError(.invalidValue, "\(schema.name).\(attribute.name) is \(attribute.type); \(value) does not compare with it",
                              entity: schema.name, attribute: attribute.name)
        }
        if case .real(let real) = value, real.isNaN {
            throw StrataError(.invalidValue, "NaN is not a comparable value", entity: schema.name, attribute: attribute.name)
        }
        return value
    }

    // MARK: SQL

    /// The SQL condition and its arguments, in order.
    func sql() -> (String, [DatabaseValue]) {
        var arguments: [DatabaseValue] = []
        let text = Self.sql(node, schema, &arguments)
        return (text, arguments)
    }

    private static func sql(_ node: Node, _ schema: EntitySchema, _ arguments: inout [DatabaseValue]) -> String {
        func column(_ position: Int) -> String { schema.attributes[position].column.quotedIdentifier }
        switch node {
        case .constant(let value): return value ? "1" : "0"
        case .compare(let position, let op, let value):
            arguments.append(value)
            return "\(column(position)) \(op.rawValue) ?"
        case .isIn(let position, let list):
            if list.values.isEmpty { return "0" }
            arguments.append(contentsOf: list.values)
            return "\(column(position)) IN (" + Array(repeating: "?", count: list.values.count).joined(separator: ",") + ")"
        case .isNull(let position): return "\(column(position)) IS NULL"
        case .hasPrefix(let position, let prefix):
            arguments.append(.integer(Int64(prefix.unicodeScalars.count)))
            arguments.append(.text(prefix))
            return "substr(\(column(position)), 1, ?) = ?"
        case .contains(let position, let text):
            arguments.append(.text(text))
            return "instr(\(column(position)), ?) > 0"
        case .matches(let terms):
            if terms.isEmpty { return "0" }
            arguments.append(.text(FullText.matchExpression(terms)))
            let fts = schema.fullTextTable.quotedIdentifier
            return "rowid IN (SELECT rowid FROM \(fts) WHERE \(fts) MATCH ?)"
        case .and(let nodes):
            if nodes.isEmpty { return "1" }
            return "(" + nodes.map { sql($0, schema, &arguments) }.joined(separator: " AND ") + ")"
        case .or(let nodes):
            if nodes.isEmpty { return "0" }
            return "(" + nodes.map { sql($0, schema, &arguments) }.joined(separator: " OR ") + ")"
        case .not(let node): return "NOT (" + sql(node, schema, &arguments) + ")"
        }
    }

    // MARK: In memory

    /// Whether `row` matches, with SQL's three-valued logic reduced to a yes or no.
    /// `row` is any ``RowSource`` (a row array, a row held in a context's column table): only the
    /// attributes the filter names are read.
    func matches(_ row: some RowSource) -> Bool { evaluate(node, row) == true }

    private func evaluate(_ node: Node, _ row: some RowSource) -> Bool? {
        switch node {
        case .constant(let value): return value
        case .compare(let position, let op, let value):
            let stored = row.value(at: position)
            if stored.isNull || value.isNull { return nil }
            let order = DatabaseValue.compare(stored, value)
            switch op {
            case .equal: return order == 0
            case .notEqual: return order != 0
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            case .greaterOrEqual: return order >= 0
            }
        case .isIn(let position, let list): return list.contains(row.value(at: position))
        case .isNull(let position): return row.value(at: position).isNull
        case .hasPrefix(let position, let prefix):
            guard case .text(let text) = row.value(at: position) else { return nil }
            return text.utf8.starts(with: prefix.utf8)
        case .contains(let position, let needle):
            guard case .text(let text) = row.value(at: position) else { return nil }
            return needle.isEmpty || Self.bytes(of: text, contain: needle)
        case .matches(let terms):
            if terms.isEmpty { return false }
            var tokens: Set<String> = []
            for name in schema.fullTextAttributes {
                if let position = schema.position(of: name), case .text(let text) = row.value(at: position) {
                    tokens.formUnion(FullText.tokens(of: text))
                }
            }
            return terms.allSatisfy { $0.matches(tokens) }
        case .and(let nodes):
            var result: Bool? = true
            for node in nodes {
                switch evaluate(node, row) {
                case false?: return false
                case nil: result = nil
                case true?: break
                }
            }
            return result
        case .or(let nodes):
            var result: Bool? = false
            for node in nodes {
                switch evaluate(node, row) {
                case true?: return true
                case nil: result = nil
                case false?: break
                }
            }
            return result
        case .not(let node): return evaluate(node, row).map { !$0 }
        }
    }

    private static func bytes(of text: String, contain needle: String) -> Bool {
        let haystack = Array(text.utf8)
        let pattern = Array(needle.utf8)
        guard pattern.count <= haystack.count else { return false }
        for start in 0...(haystack.count - pattern.count) where haystack[start] == pattern[0] {
            if haystack[start..<(start + pattern.count)].elementsEqual(pattern) { return true }
        }
        return false
    }
}

extension ResolvedFilter {
    /// The values of an `IN` list, hashed once so that a row is checked with one lookup instead
    /// of a scan of the list. Numbers are keyed by value across storage classes (SQLite finds
    /// `1` in `IN (1.0)`), text and blobs by their bytes, exactly as `DatabaseValue.compare`.
    struct InList: Sendable, Hashable {
        /// The values as given, in order: what the SQL binds.
        let values: [DatabaseValue]
        private let keys: Set<DatabaseValue>
        private let hasNull: Bool

        init(_ values: [DatabaseValue]) {
            self.values = values
            keys = Set(values.lazy.filter { !$0.isNull }.map(Self.key))
            hasNull = values.contains { $0.isNull }
        }

        /// SQL's `stored IN (values)`: true, false, or nil (unknown) when NULL is involved.
        func contains(_ stored: DatabaseValue) -> Bool? {
            if values.isEmpty { return false }
            if stored.isNull { return nil }
            if keys.contains(Self.key(stored)) { return true }
            return hasNull ? nil : false
        }

        /// One key per set of values that compare equal: numbers as an INTEGER column stores
        /// them (``NumberClass``), so an integral real in `Int64`'s range becomes that integer
        /// (SQLite compares integers and reals exactly, by value).
        private static func key(_ value: DatabaseValue) -> DatabaseValue { value.normalized(.integer) }
    }
}
