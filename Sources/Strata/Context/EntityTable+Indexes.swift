import Foundation

/// The in-memory indexes a table keeps on the main context, built whole (off the main actor for
/// a block taken at once) and then kept by every write; and taking a block of rows read from
/// the store.
extension EntityTable {
    /// Builds the in-memory indexes (once) and keeps them up to date from then on.
    func enableIndexes() throws {
        guard !indexesEnabled else { return }
        mutationCount &+= 1
        indexesEnabled = true
        indexes = try Self.emptyIndexes(of: schema)
        fullText = try Self.fullTextIndex(of: schema, slots: saved.liveSlots, row: saved.rowView(at:))
        ordered = try SortedIndex(schema: schema)
        ordered?.touchAll(in: saved)
        for slot in saved.liveSlots {
            let view = saved.rowView(at: slot)
            for index in indexes.indices { indexes[index].insert(slot, row: view) }
        }
    }

    /// The indexes `schema` declares that are kept as hash maps in memory: all but those on a
    /// leading run of the snapshot order's attributes (in its order), whose equalities the sorted
    /// index answers (``SortedIndex/equalRun(_:prefix:in:)``).
    static func hashedDeclarations(of schema: EntitySchema) -> [EntityIndex] {
        let ordered = schema.snapshotOrder.map(\.attribute)
        return schema.indexes.filter { index in
            index.attributes.count > ordered.count || !ordered.starts(with: index.attributes)
        }
    }

    /// The in-memory hash indexes of `schema` (``hashedDeclarations(of:)``), empty.
    private static func emptyIndexes(of schema: EntitySchema) throws -> [InMemoryIndex<Int>] {
        try hashedDeclarations(of: schema).map { index in
            InMemoryIndex<Int>(positions: try index.attributes.map(schema.requirePosition(of:)), schema: schema)
        }
    }

    /// The in-memory hash indexes of `schema`, over `block`'s rows (postings are row numbers,
    /// which are the slots the rows take when an empty table adopts the block). Built off the main
    /// actor by a warm start, so that filling the main context does not build them there.
    static func indexes(of schema: EntitySchema, over block: ColumnBlock) throws -> [InMemoryIndex<Int>] {
        try hashedDeclarations(of: schema).map { try index($0, of: schema, over: block) }
    }

    /// The indexes a table keeps over a block it adopts whole, built before it does (off the
    /// main actor): the declared ones and the snapshot order's.
    struct PreparedIndexes: Sendable {
        var hashed: [InMemoryIndex<Int>]
        var ordered: SortedIndex?
        var fullText: FullTextIndex?

        /// One of the indexes, as one job built it.
        enum Part: Sendable {
            /// The hash index of ``hashedDeclarations(of:)``'s declaration number `number`.
            case hashed(number: Int, InMemoryIndex<Int>)
            case ordered(SortedIndex?)
            case fullText(FullTextIndex?)
        }

        /// The jobs that build the indexes over `block`, one per index, to run together
        /// (``Parallel``), longest first as far as known: the full-text index (it tokenizes
        /// every text), the hash indexes, then the sorted one.
        static func jobs(of schema: EntitySchema, over block: ColumnBlock) -> [@Sendable () throws -> Part] {
            let fullText: [@Sendable () throws -> Part] = schema.fullTextAttributes.isEmpty ? [] : [{
                .fullText(try EntityTable.fullTextIndex(of: schema, slots: 0..<block.count, row: block.rowView(at:)))
            }]
            return fullText + hashedDeclarations(of: schema).enumerated().map { number, declaration in
                { .hashed(number: number, try index(declaration, of: schema, over: block)) }
            } + [{ .ordered(try SortedIndex.built(over: block, schema: schema)) }]
        }

        /// The indexes made of every part ``jobs(of:over:)`` built, in any order.
        init(_ parts: [Part]) {
            var numbered: [(number: Int, index: InMemoryIndex<Int>)] = []
            var ordered: SortedIndex?
            var fullText: FullTextIndex?
            for part in parts {
                switch part {
                case .hashed(let number, let index): numbered.append((number, index))
                case .ordered(let index): ordered = index
                case .fullText(let index): fullText = index
                }
            }
            hashed = numbered.sorted { $0.number < $1.number }.map(\.index)
            self.ordered = ordered
            self.fullText = fullText
        }

        init(hashed: [InMemoryIndex<Int>], ordered: SortedIndex?, fullText: FullTextIndex?) {
            self.hashed = hashed
            self.ordered = ordered
            self.fullText = fullText
        }
    }

    /// ``indexes(of:over:)`` and the snapshot order's index, built in parallel (``Parallel``):
    /// blocks its caller, so call it off the main actor.
    static func indexesInParallel(of schema: EntitySchema, over block: ColumnBlock) throws -> PreparedIndexes {
        PreparedIndexes(try Parallel.run(PreparedIndexes.jobs(of: schema, over: block)))
    }

    /// The full-text index of `schema`'s full-text attributes over the rows in `slots`
    /// (ascending), or nil when it declares none.
    static func fullTextIndex<Row: RowSource>(of schema: EntitySchema, slots: some Sequence<Int>,
                                              row: (Int) -> Row) throws -> FullTextIndex? {
        guard !schema.fullTextAttributes.isEmpty else { return nil }
        let positions = try schema.fullTextAttributes.map(schema.requirePosition(of:))
        return FullTextIndex.built(positions: positions, slots: slots, row: row)
    }

    /// The in-memory hash index `declared` of `schema`, over `block`'s rows.
    static func index(_ declared: EntityIndex, of schema: EntitySchema, over block: ColumnBlock) throws -> InMemoryIndex<Int> {
        .built(positions: try declared.attributes.map(schema.requirePosition(of:)), schema: schema, over: block)
    }

    // MARK: Taking rows read from the store

    /// Takes a block of checked rows (a snapshot's, a fetch's), as of `sequence`: whole, when the
    /// table holds nothing yet (and returns nil); otherwise row by row, keeping newer copies, and
    /// returns what changed. A fetched row replaces an older held copy whatever made it differ
    /// (the store takes in outside commits before it reads), and an unsaved edit made on the
    /// older copy becomes a conflict resolved by `policy`, as in a merge. `prepared` are
    /// ``indexesInParallel(of:over:)`` of the block, used when the block is taken whole.
    @discardableResult
    func fill(_ block: ColumnBlock, asOf sequence: UInt64, prepared: PreparedIndexes? = nil,
              policy: MergePolicy = .default) throws -> ContextChange.EntityChanges? {
        mutationCount &+= 1
        guard saved.count == 0, deletions.isEmpty else {
            var changes = ContextChange.EntityChanges()
            for row in 0..<block.count {
                let key = block.key(at: row)
                if let slot = saved.slot(of: key), records.version(at: slot) >= sequence { continue }
                if let deleted = deletions[key], deleted > sequence { continue }
                try mergeRow(block.row(at: row), sequence: sequence, isOwn: false, registersNew: true, policy: policy,
                             changes: &changes)
            }
            return changes
        }
        let indexes = indexesEnabled
            ? try prepared ?? PreparedIndexes(hashed: Self.indexes(of: schema, over: block),
                                              ordered: SortedIndex.built(over: block, schema: schema),
                                              fullText: Self.fullTextIndex(of: schema, slots: 0..<block.count,
                                                                           row: block.rowView(at:)))
            : nil
        saved.adopt(block)
        records.adopt(count: saved.slotCount, version: sequence)
        values.removeAll()
        if let indexes {
            self.indexes = indexes.hashed
            ordered = indexes.ordered
            fullText = indexes.fullText
        }
        return nil
    }
}
