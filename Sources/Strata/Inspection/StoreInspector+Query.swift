extension StoreInspector {
    /// The rows matching `query`, in its order: one ``Row`` per object, its columns named by
    /// attribute (coding key) in schema order, its values as stored.
    /// - Throws: `.unknownEntity`; `.unknownAttribute` or `.invalidValue` for a filter or sort key
    ///   that does not fit the recorded schema.
    public func rows(_ query: InspectionQuery) throws -> [Row] {
        let (resolved, sql, arguments) = try prepare(query)
        let columns = resolved.schema.attributes.map(\.name)
        return try connection.rows(sql, arguments, cached: false).map { Row(columns: columns, values: $0) }
    }

    /// The number of objects matching `query` (its window applies).
    public func count(_ query: InspectionQuery) throws -> Int {
        let (resolved, _, _) = try prepare(query)
        let (sql, arguments) = resolved.selectSQL(columns: "1")
        let value = try connection.rows("SELECT count(*) FROM (\(sql))", arguments, cached: false).first?.first
        return Int.fromDatabaseValue(value ?? .null) ?? 0
    }

    /// The SQL `query` runs and its arguments, as ``rows(_:)`` sends them to SQLite.
    public func sql(for query: InspectionQuery) throws -> (sql: String, arguments: [DatabaseValue]) {
        let (_, sql, arguments) = try prepare(query)
        return (sql, arguments)
    }

    /// SQLite's plan for `query` (`EXPLAIN QUERY PLAN`).
    public func explain(_ query: InspectionQuery) throws -> [QueryPlanStep] {
        let (_, sql, arguments) = try prepare(query)
        return try connection.explainQueryPlan(sql, arguments)
    }

    private func prepare(_ query: InspectionQuery) throws -> (ResolvedQuery, String, [DatabaseValue]) {
        let schema = try entity(named: query.entity)
        do {
            let resolved = try ResolvedQuery(schema: schema, filter: query.filter, sortKeys: query.sortKeys,
                                             limit: query.limit, offset: query.offset)
            let (sql, arguments) = resolved.selectSQL()
            return (resolved, sql, arguments)
        } catch var error as StrataError {
            error.path = error.path ?? path
            throw error
        }
    }
}
