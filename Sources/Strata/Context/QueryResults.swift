import Foundation

/// The result of a query over the main context (``MainContext/results(matching:)``), as of the
/// query: the objects' IDs in order and their rows, with each value built — its
/// ``Entity/init(row:)`` run — only when it is accessed.
///
/// A list screen asks for the first 50 matches and builds only the rows it shows:
///
/// ```swift
/// let page = try main.results(matching: Query<Article>(where: Attribute("isRead") == false,
///                                                     sortedBy: [Attribute("published").descending], limit: 50))
/// page.ids            // all 50, no value built
/// page[0].title       // builds one article
/// ```
///
/// The results do not change when the context does (observe a ``LiveQuery`` for that), and they
/// are `Sendable`: building values can happen on any thread. Values are not kept: each access
/// builds the value again, so keep the ones you use. Accessing an element whose row the
/// entity's `init(row:)` cannot read stops the program with the error (the store checked every
/// row against the schema when it arrived, so only a codec that rejects values it wrote can);
/// ``value(at:)`` throws it instead.
public struct QueryResults<E: Entity>: RandomAccessCollection, Sendable {
    /// The IDs of the results, in the query's order.
    public let ids: [E.ID]
    /// The saved copies among the results, in order, copied cell by cell (no value, no `String`).
    private let saved: ColumnBlock
    /// The results that are unsaved edits, by position, as rows; the others are `saved`'s rows.
    private let edited: [Int: [DatabaseValue]]
    /// Per position, the row of `saved` (nil when every result is a saved copy: row = position).
    private let savedRows: [Int]?

    init(ids: [E.ID], saved: ColumnBlock, edited: [Int: [DatabaseValue]]) {
        self.ids = ids
        self.saved = saved
        self.edited = edited
        if edited.isEmpty {
            savedRows = nil
        } else {
            var next = 0
            savedRows = ids.indices.map { position in
                guard edited[position] == nil else { return -1 }
                defer { next += 1 }
                return next
            }
        }
    }

    /// Results whose values are the rows `rows` of `saved`, in order (one per ID).
    init(ids: [E.ID], saved: ColumnBlock, rows: [Int]) {
        precondition(ids.count == rows.count, "one row per result")
        self.ids = ids
        self.saved = saved
        self.edited = [:]
        self.savedRows = rows
    }

    /// The first position, 0.
    public var startIndex: Int { 0 }
    /// One past the last position: the number of results.
    public var endIndex: Int { ids.count }

    /// The value at `position`, built from its row now.
    public subscript(position: Int) -> E {
        do {
            return try value(at: position)
        } catch {
            preconditionFailure("\(E.entityName) \(ids[position]) cannot be read from its row: \(error)")
        }
    }

    /// The value at `position`, built from its row now.
    /// - Throws: what the entity's ``Entity/init(row:)`` throws for the row.
    public func value(at position: Int) throws -> E {
        precondition(indices.contains(position), "position \(position) is outside the \(count) results")
        if let row = edited[position] {
            return try RowDecoder<[DatabaseValue]>(schema: saved.schema).decode(E.self, from: row)
        }
        let row = savedRows?[position] ?? position
        return try RowDecoder<ColumnBlock.RowView>(schema: saved.schema).decode(E.self, from: saved.rowView(at: row))
    }
}
