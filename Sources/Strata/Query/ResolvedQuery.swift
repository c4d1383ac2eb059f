import Foundation

/// A ``Query`` checked against its entity's schema, able to render SQL and to run in memory.
struct ResolvedQuery: Sendable {
    let schema: EntitySchema
    let filter: ResolvedFilter
    let sort: [(position: Int, ascending: Bool)]
    let limit: Int?
    let offset: Int

    init<E: Entity>(_ query: Query<E>, schema: EntitySchema) throws {
        try self.init(schema: schema, filter: query.filter, sortKeys: query.sortKeys, limit: query.limit, offset: query.offset)
    }

    /// A query over an entity known only by its schema (the inspector's, which has no `Entity` type).
    init(schema: EntitySchema, filter: Filter, sortKeys: [SortKey] = [], limit: Int? = nil, offset: Int = 0) throws {
        self.schema = schema
        self.filter = try ResolvedFilter(filter, schema: schema)
        self.sort = try sortKeys.map { (try schema.requirePosition(of: $0.attribute), $0.isAscending) }
        // SQLite reads a negative LIMIT as no limit; normalizing here keeps the in-memory window the same.
        self.limit = limit.flatMap { $0 < 0 ? nil : $0 }
        self.offset = max(0, offset)
    }

    var selectList: String { schema.attributes.map(\.column.quotedIdentifier).joined(separator: ", ") }

    /// `SELECT <columns> FROM <table> WHERE … ORDER BY … LIMIT … OFFSET …`.
    func selectSQL(columns: String? = nil, window: Bool = true) -> (String, [DatabaseValue]) {
        let (condition, filterArguments) = filter.sql()
        var arguments = filterArguments
        var sql = "SELECT \(columns ?? selectList) FROM \(schema.table.quotedIdentifier)"
        if !filter.isAlwaysTrue { sql += " WHERE " + condition }
        let keys = sort.map { schema.attributes[$0.position].column.quotedIdentifier + ($0.ascending ? " ASC" : " DESC") }
            + [schema.primaryKey.column.quotedIdentifier + " ASC"]
        sql += " ORDER BY " + keys.joined(separator: ", ")
        if window, limit != nil || offset > 0 {
            sql += " LIMIT ? OFFSET ?"
            arguments.append(.integer(Int64(limit ?? -1)))
            arguments.append(.integer(Int64(offset)))
        }
        return (sql, arguments)
    }

    /// Orders rows as the SQL `ORDER BY` does (sort keys, then primary key ascending), reading
    /// only the cells it compares.
    func areInIncreasingOrder(_ lhs: some RowSource, _ rhs: some RowSource) -> Bool {
        for (position, ascending) in sort {
            let order = DatabaseValue.compare(lhs.value(at: position), rhs.value(at: position))
            if order != 0 { return ascending ? order < 0 : order > 0 }
        }
        return DatabaseValue.compare(lhs.value(at: schema.primaryKeyIndex), rhs.value(at: schema.primaryKeyIndex)) < 0
    }

    /// Appends the values a row is ordered by: its sort attributes', then its primary key.
    func appendSortValues(_ row: some RowSource, to values: inout [DatabaseValue]) {
        for (position, _) in sort { values.append(row.value(at: position)) }
        values.append(row.value(at: schema.primaryKeyIndex))
    }

    /// Orders two runs of ``appendSortValues(_:to:)`` (each starting at its slice's start) as
    /// ``areInIncreasingOrder(_:_:)`` orders their rows.
    func sortValuesInIncreasingOrder(_ lhs: Slice<UnsafeBufferPointer<DatabaseValue>>,
                                     _ rhs: Slice<UnsafeBufferPointer<DatabaseValue>>) -> Bool {
        let left = lhs.startIndex, right = rhs.startIndex
        for (index, (_, ascending)) in sort.enumerated() {
            let order = DatabaseValue.compare(lhs.base[left + index], rhs.base[right + index])
            if order != 0 { return ascending ? order < 0 : order > 0 }
        }
        return DatabaseValue.compare(lhs.base[left + sort.count], rhs.base[right + sort.count]) < 0
    }

    /// Filters, sorts and windows rows in memory exactly as the SQL would.
    func evaluate(_ rows: [[DatabaseValue]]) -> [[DatabaseValue]] {
        let matching = filter.isAlwaysTrue ? rows : rows.filter(filter.matches)
        return window(matching.sorted { areInIncreasingOrder($0, $1) })
    }

    /// How many matches, in order, the window reaches into (`offset + limit`, saturating), or nil
    /// without a limit: a window needs only its first `windowEnd` matches ordered.
    var windowEnd: Int? {
        limit.map { offset.addingReportingOverflow($0).overflow ? Int.max : offset + $0 }
    }

    /// How many of `total` matches the window keeps.
    func windowCount(_ total: Int) -> Int {
        let remaining = max(0, total - offset)
        return limit.map { min(remaining, max(0, $0)) } ?? remaining
    }

    func window<T>(_ sorted: [T]) -> [T] {
        guard offset > 0 || limit != nil else { return sorted }
        let start = min(offset, sorted.count)
        let end = limit.map { start + min(sorted.count - start, max(0, $0)) } ?? sorted.count  // no overflow at Int.max
        return Array(sorted[start..<end])
    }
}
