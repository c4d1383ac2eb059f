/// A warm start's first screen, its entity type erased: a query and where to show its results,
/// answered from an archive's first chunk alone, before the rest of the archive is read — only
/// when that chunk decides the answer — or else from the filled main context.
@MainActor
struct FirstScreen {
    let entity: String
    private let showFromChunk: (SnapshotLoader.FirstChunk) -> Bool
    private let showFromContext: (MainContext) throws -> Void

    init<E: Entity>(_ query: Query<E>, _ showing: @escaping @MainActor (QueryResults<E>) -> Void) {
        entity = E.entityName
        showFromChunk = { chunk in
            guard let results = try? Self.results(query, in: chunk) else { return false }
            showing(results)
            return true
        }
        showFromContext = { main in showing(try main.results(matching: query)) }
    }

    /// Shows the screen from an archive's first chunk when the chunk decides it; false when not.
    func show(from chunk: SnapshotLoader.FirstChunk) -> Bool { showFromChunk(chunk) }

    /// Shows the screen from the filled main context.
    func show(from main: MainContext) throws { try showFromContext(main) }

    /// The results of `query` over `chunk`, or nil when objects outside the chunk could belong
    /// to them. The chunk decides when it is its entity's whole section, or when the query is
    /// ordered exactly as the archive is (``EntitySchema/snapshotOrder``, ties by key) and the
    /// chunk holds at least `offset + limit` matches: every later object comes after them.
    nonisolated static func results<E: Entity>(_ query: Query<E>, in chunk: SnapshotLoader.FirstChunk) throws -> QueryResults<E>? {
        let block = chunk.block
        let resolved = try ResolvedQuery(query, schema: block.schema)
        var rows: [Int] = []
        if query.sortKeys == block.schema.snapshotOrder {
            let needed = resolved.windowEnd
            for row in 0..<block.count where rows.count != needed {
                if resolved.filter.matches(block.rowView(at: row)) { rows.append(row) }
            }
            guard chunk.isWholeSection || rows.count == needed else { return nil }
        } else {
            guard chunk.isWholeSection else { return nil }
            rows = (0..<block.count).filter { resolved.filter.matches(block.rowView(at: $0)) }
            rows.sort { resolved.areInIncreasingOrder(block.rowView(at: $0), block.rowView(at: $1)) }
        }
        rows = resolved.window(rows)
        var ids: [E.ID] = []
        ids.reserveCapacity(rows.count)
        for row in rows {
            guard let id = E.ID.fromDatabaseValue(block.key(at: row)) else { return nil }
            ids.append(id)
        }
        return QueryResults(ids: ids, saved: block, rows: rows)
    }
}
