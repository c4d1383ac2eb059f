import Foundation

/// The objects of one entity that a context holds — saved copies with the store version each
/// reflects, unsaved edits with the version they were made on, and (on the main context)
/// in-memory indexes — as rows, not as the app's values.
///
/// Not generic over the entity type: the saved copies live in a ``ColumnTable`` (one cell per
/// attribute, text and blobs in one arena), keyed by primary key; merges, conflicts and indexes
/// work on rows; the app's values are built only when a caller reads them (`init(row:)`, in
/// `EntityTable+Values`). An edit keeps the value the caller gave and its row, encoded once.
/// Not thread-safe: owned by one context's isolation.
final class EntityTable {
    struct Edit {
        enum Kind { case insert, update, delete }
        var kind: Kind
        /// The value the caller gave (nil for a deletion, or after a property-level merge until
        /// it is read again), and its row.
        var value: (any Entity)?
        var row: [DatabaseValue]?
        /// The version of the copy the edit was made on (0 for a new object), and that copy's row.
        var baseVersion: UInt64
        var baseRow: [DatabaseValue]?
        var isConflicted = false
        /// When the object was first edited (the table's clock): a save lists its edits in this order.
        var order: UInt64 = 0
    }

    let schema: EntitySchema
    /// The app's type for this entity (the one type that may use its name).
    let entityType: any Entity.Type
    let saved: ColumnTable
    private(set) var edits: [DatabaseValue: Edit] = [:] {
        didSet { mutationCount &+= 1 }
    }
    /// How many times the table changed other than by a read: a merge prepared off the main
    /// actor on a copy of the table replaces it only when this has not moved since the copy.
    private(set) var mutationCount: UInt64 = 0
    /// While a merge is prepared off the main actor on a copy of this table, the saved copies read
    /// meanwhile (nil otherwise): replayed on the prepared table when it replaces this one.
    var readLog: [ReadMark]?

    /// A saved copy read while a merge was being prepared: its key, slot and version then.
    struct ReadMark {
        let key: DatabaseValue
        let slot: Int
        let version: UInt64
    }

    /// Copies the caller read before a merge replaced them: an edit is based on what the caller
    /// read, not on what was merged after the read. Only objects read and then merged over.
    private var staleReads: [DatabaseValue: [DatabaseValue]] = [:]
    /// Deletions merged while a fetch was in flight, so that its older result does not bring
    /// the objects back. Kept only while ``remembersDeletions`` (the graph turns it off, and
    /// forgets them all, when its last fetch in flight finishes).
    private var deletions: [DatabaseValue: UInt64] = [:]
    var remembersDeletions = false {
        didSet { if !remembersDeletions { deletions.removeAll() } }
    }
    var rememberedDeletionCount: Int { deletions.count }
    /// In-memory indexes over the saved copies, whose postings are slots.
    private var indexes: [InMemoryIndex<Int>] = []
    /// The inverted index of the entity's full-text attributes, when it declares some (kept with
    /// `indexes`): the candidates of a `.matches` condition.
    private(set) var fullText: FullTextIndex?
    /// The saved copies in the entity's snapshot order, when it declares one (kept with `indexes`).
    private(set) var ordered: SortedIndex?
    private(set) var indexesEnabled = false
    private var clock: UInt64 = 0
    /// The names of the entity's attributes: what changed in an object replaced whole.
    private(set) lazy var attributeNames = Set(schema.attributes.map(\.name))
    private(set) lazy var encoder = RowEncoder(schema: schema)
    private(set) lazy var rowDecoder = RowDecoder<[DatabaseValue]>(schema: schema)
    private(set) lazy var cellDecoder = RowDecoder<ColumnTable.RowView>(schema: schema)

    /// A table for `type`'s objects that keeps at most `valueCacheLimit` values built from saved
    /// copies (see ``ValueCache``).
    init(type: any Entity.Type, schema: EntitySchema, valueCacheLimit: Int) {
        self.entityType = type
        self.schema = schema
        self.saved = ColumnTable(schema: schema, valueCacheLimit: valueCacheLimit)
    }

    /// A copy of `other` that shares its storage until either is written (see
    /// ``ColumnTable/copy()``): what a merge prepared off the main actor works on. The copy
    /// remembers merged deletions whatever `other` does (a fetch may start before the copy
    /// replaces `other`; ``ObjectGraph/adopt(_:)`` then keeps or forgets them).
    init(copying other: EntityTable) {
        entityType = other.entityType
        schema = other.schema
        saved = other.saved.copy()
        edits = other.edits
        staleReads = other.staleReads
        deletions = other.deletions
        remembersDeletions = true
        indexes = other.indexes
        fullText = other.fullText
        ordered = other.ordered
        indexesEnabled = other.indexesEnabled
        clock = other.clock
    }

    var hasEdits: Bool { !edits.isEmpty }
    var editCount: Int { edits.count }
    var registeredCount: Int { saved.count }
    var conflictingIDs: [DatabaseValue] {
        // A closure, not a key path: applying `\.isConflicted` copied every edit (a save asks first).
        edits.values.contains(where: { $0.isConflicted }) ? edits.filter { $0.value.isConflicted }.map(\.key) : []
    }
    /// The saved copies' primary keys.
    var heldKeys: [DatabaseValue] { saved.liveSlots.map(saved.key(at:)) }

    private func key(of row: [DatabaseValue]) -> DatabaseValue { row[schema.primaryKeyIndex] }

    // MARK: Reading rows

    /// Marks the saved copy in `slot` as read by the caller now (its version is what an edit
    /// made from it is based on, and it is recently used).
    func markRead(_ slot: Int) {
        if readLog != nil { readLog!.append(ReadMark(key: saved.key(at: slot), slot: slot, version: saved.version(at: slot))) }
        clock += 1
        saved.setLastUse(clock, at: slot)
        if saved.readVersion(at: slot) != saved.version(at: slot) {
            saved.setReadVersion(saved.version(at: slot), at: slot)
            if !staleReads.isEmpty { staleReads[saved.key(at: slot)] = nil }
        }
    }

    /// Replays the reads `old` logged (``readLog``) while this table — a copy of `old` — was
    /// merging a change set off the main actor, as if they had happened before the merge: a copy
    /// the merge left as it was is marked read; one it replaced keeps the version read as the
    /// base of a later edit, and the row read (``staleReads``), as ``store(_:version:)`` would
    /// have kept it.
    /// The values `old` kept built come along (a value whose copy the merge replaced is never
    /// handed out: ``ColumnTable/takeCachedValues(from:)``).
    func replayReads(of old: EntityTable) {
        saved.takeCachedValues(from: old.saved)
        clock = max(clock, old.clock)
        for mark in old.readLog ?? [] {
            guard let slot = saved.slot(of: mark.key) else { continue }
            if saved.version(at: slot) == mark.version {
                markRead(slot)
                continue
            }
            clock += 1
            saved.setLastUse(clock, at: slot)
            saved.setReadVersion(mark.version, at: slot)
            staleReads[mark.key] = old.saved.row(at: mark.slot)
        }
    }

    /// What the context shows for `key`, as a row: its unsaved edit if any, else its saved copy.
    func visibleRow(_ key: DatabaseValue) -> [DatabaseValue]? {
        if let edit = edits[key] { return edit.row }
        return saved.slot(of: key).map(saved.row(at:))
    }

    /// Appends the values `resolved` orders what the context shows for `key` by
    /// (``ResolvedQuery/appendSortValues(_:to:)``) when it matches the query's filter, and says
    /// whether it did. A saved copy is read in place: only the cells the filter and the order name.
    func appendSortValues(_ key: DatabaseValue, ifMatching resolved: ResolvedQuery, to values: inout [DatabaseValue]) -> Bool {
        if let edit = edits[key] {
            guard let row = edit.row, resolved.filter.matches(row) else { return false }
            resolved.appendSortValues(row, to: &values)
            return true
        }
        guard let slot = saved.slot(of: key) else { return false }
        let view = saved.rowView(at: slot)
        guard resolved.filter.matches(view) else { return false }
        resolved.appendSortValues(view, to: &values)
        return true
    }

    /// What a filter is evaluated on, each object once: saved copies by slot (those not being
    /// edited) and unsaved edits by key.
    struct Candidates {
        var slots: [Int] = []
        var edited: [DatabaseValue] = []
        /// Whether every saved copy in `slots` is known to match (an index answered the whole
        /// filter): only the edits need evaluating.
        var slotsMatch = false
        /// Whether `slots` are every saved copy not being edited (no key or index narrowed them).
        var isScan = false
        /// What is left of the filter to evaluate on the saved copies in `slots`, when an index
        /// answered part of it (the full-text index, its `.matches` conditions); nil: the whole
        /// filter (unless ``slotsMatch``).
        var slotFilter: ResolvedFilter?

        /// Whether the saved copy `row`, one of ``slots``, matches `filter` (the whole filter).
        func admits(_ row: some RowSource, _ filter: ResolvedFilter) -> Bool {
            slotsMatch || (slotFilter ?? filter).matches(row)
        }
    }

    /// Every object the context shows (the saved copies' slots only when `listing`).
    private func scanCandidates(listing: Bool) -> Candidates {
        var candidates = Candidates()
        if listing {
            let live = saved.liveSlots
            candidates.slots = edits.isEmpty ? live : live.filter { edits[saved.key(at: $0)] == nil }
        }
        candidates.edited = edits.compactMap { $0.value.row == nil ? nil : $0.key }
        candidates.isScan = true
        return candidates
    }

    /// Places the saved copies changed since the snapshot order's index was last read (see
    /// ``SortedIndex/settle(in:)``): what a merge prepared off the main actor does before the
    /// main actor adopts its tables.
    func settleOrder() { ordered?.settle(in: saved) }

    /// The objects a filter has to be evaluated on: the keys it pins when they are fewer than the
    /// objects shown (never more lookups than a scan), else an index's matches, else everything
    /// (`isScan`; the saved copies' slots are listed only when `listingScan`).
    func candidates(_ filter: ResolvedFilter, listingScan: Bool = true) throws -> Candidates {
        var candidates = Candidates()
        if let keys = lookupKeys(filter), keys.count <= saved.count + edits.count {
            for key in keys {
                if let edit = edits[key] {
                    if edit.row != nil { candidates.edited.append(key) }
                } else if let slot = saved.slot(of: key) {
                    candidates.slots.append(slot)
                }
            }
            return candidates
        }
        if let (slots, rest) = fullTextCandidates(filter) {
            candidates.slots = edits.isEmpty ? slots : slots.filter { edits[saved.key(at: $0)] == nil }
            candidates.edited = edits.compactMap { $0.value.row == nil ? nil : $0.key }
            candidates.slotFilter = rest
            candidates.slotsMatch = rest == nil
            return candidates
        }
        if let (indexed, exact) = try indexedCandidates(filter) {
            candidates.slots = edits.isEmpty ? indexed : indexed.filter { edits[saved.key(at: $0)] == nil }
            candidates.edited = edits.compactMap { $0.value.row == nil ? nil : $0.key }
            candidates.slotsMatch = exact
            return candidates
        }
        return scanCandidates(listing: listingScan)
    }

    /// The distinct keys a filter pins (``ResolvedFilter/requiredKeys``) as held keys are stored —
    /// numbers in the key attribute's class, so that `id IN (1.0)` finds the integer key 1, NULL
    /// (which equals nothing) left out — or nil when some comparison is not a plain hash lookup
    /// in SQL (``InMemoryIndex/decidesEquality(_:in:)``) or the filter pins no key.
    private func lookupKeys(_ filter: ResolvedFilter) -> [DatabaseValue]? {
        let type = schema.primaryKey.type
        guard let keys = filter.requiredKeys, keys.allSatisfy({ InMemoryIndex<Int>.decidesEquality($0, in: type) }) else {
            return nil
        }
        let numbers = InMemoryIndex<Int>.numberClass(type)
        var seen = Set<DatabaseValue>(minimumCapacity: keys.count)
        return keys.map { InMemoryIndex<Int>.normalized($0, numbers) }.filter { !$0.isNull && seen.insert($0).inserted }
    }

    /// The saved copies that match the full-text conditions of the filter's top-level AND
    /// (``ResolvedFilter/requiredFullText``), as the full-text index lists them, and what is left
    /// of the filter to evaluate on them (nil: nothing); nil when the index does not apply. The
    /// conditions are one: a row matches all of them when it matches every term of each, and
    /// none when one has no term.
    private func fullTextCandidates(_ filter: ResolvedFilter) -> (slots: [Int], rest: ResolvedFilter?)? {
        guard let fullText else { return nil }
        let required = filter.requiredFullText
        guard !required.isEmpty else { return nil }
        let slots = fullText.slots(matching: required.contains(where: \.isEmpty) ? [] : required.flatMap { $0 })
        return (slots, filter.withoutRequiredFullText)
    }

    /// The keys of the objects a filter has to be evaluated on (see ``candidates(_:)``).
    func candidateKeys(_ filter: ResolvedFilter) throws -> [DatabaseValue] {
        let candidates = try candidates(filter)
        return candidates.slots.map(saved.key(at:)) + candidates.edited
    }

    /// How many objects the context shows match a query (its window applied), without building
    /// values or sorting: straight from an in-memory index when the filter is exactly equalities
    /// on an index's leading attributes and nothing is being edited, else by evaluating the
    /// filter on the candidates.
    func count(_ resolved: ResolvedQuery) throws -> Int {
        if edits.isEmpty, let equalities = resolved.filter.equalitiesOnly, try indexesApply(to: equalities),
           let total = exactIndexCount(equalities) {
            return resolved.windowCount(total)
        }
        let candidates = try candidates(resolved.filter)
        var total = 0
        for slot in candidates.slots where candidates.admits(saved.rowView(at: slot), resolved.filter) { total += 1 }
        for key in candidates.edited where edits[key]?.row.map(resolved.filter.matches) == true { total += 1 }
        return resolved.windowCount(total)
    }

    /// The fewest candidates an index gives for the filter's equalities, and whether they are
    /// exactly the filter's matches (the filter is nothing but equalities on a prefix of that
    /// index's attributes, none with NULL: ``InMemoryIndex/count(exactly:)``'s case).
    private func indexedCandidates(_ filter: ResolvedFilter) throws -> (slots: [Int], exact: Bool)? {
        let equalities = filter.requiredEqualities
        guard try indexesApply(to: equalities) else { return nil }
        if let exactly = filter.equalitiesOnly, !exactly.values.contains(where: \.isNull) {
            if let slots = indexes.lazy.compactMap({ $0.count(exactly: exactly) == nil ? nil : $0.candidates(exactly) }).first {
                return (slots, true)
            }
            if ordered?.answersExactly(exactly) == true, let run = orderedRun(exactly) { return (Array(run), true) }
        }
        let hashed = indexes.lazy.compactMap { $0.candidates(equalities) }.min { $0.count < $1.count }
        guard let run = orderedRun(equalities), run.count < hashed?.count ?? .max else { return hashed.map { ($0, false) } }
        return (Array(run), false)
    }

    /// Whether in-memory indexes may look up `equalities`: the entity has some (declared, or its
    /// snapshot order's), and each comparison is a plain lookup in SQL
    /// (``InMemoryIndex/decidesEquality(_:in:)``). Builds the indexes first when they are.
    private func indexesApply(to equalities: [Int: DatabaseValue]) throws -> Bool {
        guard !equalities.isEmpty, !schema.indexes.isEmpty || ordered != nil,
              equalities.allSatisfy({ InMemoryIndex<Int>.decidesEquality($0.value, in: schema.attributes[$0.key].type) })
        else { return false }
        try enableIndexes()
        return true
    }

    /// How many saved copies match exactly `equalities` (the whole filter) when one index answers
    /// them alone: a hash index on those attributes, or the snapshot order's index on them.
    private func exactIndexCount(_ equalities: [Int: DatabaseValue]) -> Int? {
        if let total = indexes.lazy.compactMap({ $0.count(exactly: equalities) }).first { return total }
        guard ordered?.answersExactly(equalities) == true else { return nil }
        // NULL equals nothing in SQL.
        return equalities.values.contains(where: \.isNull) ? 0 : orderedRun(equalities)?.count
    }

    /// The saved copies whose leading snapshot-order attributes equal `equalities`' values (the
    /// longest run of them the equalities pin), or nil when they pin none.
    private func orderedRun(_ equalities: [Int: DatabaseValue]) -> ArraySlice<Int>? {
        guard let prefix = ordered?.pinnedPrefix(equalities), prefix > 0 else { return nil }
        settleOrder()
        return ordered?.equalRun(equalities, prefix: prefix, in: saved)
    }

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

    // MARK: Taking rows read from the store

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
    private static func index(_ declared: EntityIndex, of schema: EntitySchema, over block: ColumnBlock) throws -> InMemoryIndex<Int> {
        .built(positions: try declared.attributes.map(schema.requirePosition(of:)), schema: schema, over: block)
    }

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
                if let slot = saved.slot(of: key), saved.version(at: slot) >= sequence { continue }
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
        saved.adopt(block, version: sequence)
        if let indexes {
            self.indexes = indexes.hashed
            ordered = indexes.ordered
            fullText = indexes.fullText
        }
        return nil
    }

    /// Keeps `row` as the saved copy at `version`, updating the indexes and remembering the copy
    /// the caller last read when a newer one replaces it.
    private func store(_ row: [DatabaseValue], version: UInt64) {
        // One hash lookup: the key's slot, or a new one claimed for it.
        store(row, version: version, claimed: saved.claim(key(of: row)))
    }

    /// ``store(_:version:)`` into the slot the caller already found or claimed for the row's key.
    ///
    /// `changed`, when the caller knows them, are the positions whose cells the row changes in a
    /// slot that holds one: the indexes move the slot only from the first level over a changed
    /// attribute, and the snapshot order only when a sort attribute changed.
    private func store(_ row: [DatabaseValue], version: UInt64, claimed: (slot: Int, isNew: Bool), changed: [Int]? = nil) {
        mutationCount &+= 1
        let key = key(of: row)
        let (slot, isNew) = claimed
        if isNew {
            saved.write(row, at: slot, version: version)
            if indexesEnabled { for index in indexes.indices { indexes[index].insertNew(slot, row: row) } }
            fullText?.insert(slot, row: row)
            ordered?.touch(slot)
        } else {
            keepReadCopy(slot, key: key, replacedAt: version)
            rewrite(slot, changed: changed, newRow: row) { saved.write(row, at: slot, version: version) }
        }
        clock += 1
        saved.setLastUse(clock, at: slot)
    }

    /// Makes room in the saved copies for `count` new objects, in bulk.
    func reserve(forNew count: Int) {
        saved.addFreeSlots(count)
    }

    private func remove(_ key: DatabaseValue, sequence: UInt64) {
        mutationCount &+= 1
        if let slot = saved.slot(of: key) { removeSlot(slot) }
        if !staleReads.isEmpty { staleReads[key] = nil }
        if remembersDeletions { deletions[key] = sequence }
    }

    /// Removes the saved copy in `slot`, and its index postings.
    private func removeSlot(_ slot: Int) {
        mutationCount &+= 1
        if indexesEnabled {
            let view = saved.rowView(at: slot)
            for index in indexes.indices { indexes[index].remove(slot, row: view) }
            fullText?.remove(slot, row: view)
        }
        ordered?.touch(slot)
        saved.remove(at: slot)
    }

    /// The version and row an edit of `key` is based on: what the caller last read.
    private func readBase(_ key: DatabaseValue) -> (version: UInt64, row: [DatabaseValue])? {
        guard let slot = saved.slot(of: key) else { return nil }
        let read = saved.readVersion(at: slot), version = saved.version(at: slot)
        if read > 0, read < version { return (read, staleReads[key] ?? saved.row(at: slot)) }
        return (version, saved.row(at: slot))
    }

    /// An edit made on a copy older than the one held since: a conflict with that newer copy.
    private func resolveStaleRead(_ edit: inout Edit, key: DatabaseValue, policy: MergePolicy) throws {
        guard let slot = saved.slot(of: key), edit.baseVersion < saved.version(at: slot) else { return }
        try resolve(&edit, remote: saved.row(at: slot), sequence: saved.version(at: slot), policy: policy)
    }

    // MARK: Local edits

    /// The next first-edit order.
    private func nextOrder() -> UInt64 {
        clock += 1
        return clock
    }

    /// Records an insert of `value` (an update when the context holds the object), its row encoded once.
    func insert(_ value: any Entity, row: [DatabaseValue], policy: MergePolicy) throws {
        let key = key(of: row)
        let existing = edits[key]
        let base = readBase(key)
        var edit = Edit(kind: base == nil && existing?.kind != .update ? .insert : .update, value: value, row: row,
                        baseVersion: existing?.baseVersion ?? base?.version ?? 0, baseRow: existing?.baseRow ?? base?.row,
                        order: existing?.order ?? nextOrder())
        if existing == nil { try resolveStaleRead(&edit, key: key, policy: policy) }
        edits[key] = edit.kind == .insert && edit.row == nil ? nil : edit
    }

    /// Records an update of an object the context shows.
    func update(_ value: any Entity, row: [DatabaseValue], policy: MergePolicy) throws {
        let key = key(of: row)
        guard edits[key]?.row != nil || saved.slot(of: key) != nil else {
            throw StrataError(.objectNotFound, "cannot update \(schema.name) \(key): the context does not hold it; "
                              + "fetch it first or insert it", entity: schema.name, objectID: "\(key)")
        }
        let existing = edits[key]
        let base = readBase(key)
        var edit = Edit(kind: existing?.kind == .insert ? .insert : .update, value: value, row: row,
                        baseVersion: existing?.baseVersion ?? base?.version ?? 0,
                        baseRow: existing?.baseRow ?? base?.row, isConflicted: existing?.isConflicted ?? false,
                        order: existing?.order ?? nextOrder())
        if existing == nil { try resolveStaleRead(&edit, key: key, policy: policy) }
        edits[key] = edit.kind == .insert && edit.row == nil ? nil : edit
    }

    /// Records a deletion by key, whether or not the context holds the object.
    func delete(_ key: DatabaseValue, policy: MergePolicy) throws {
        if let existing = edits[key], existing.kind == .insert, saved.slot(of: key) == nil {
            edits[key] = nil
            return
        }
        // An object the context does not hold is deleted blind (base version 0): every change
        // to it merged before the save is a conflict for the merge policy.
        let base = readBase(key)
        let existing = edits[key]
        var edit = Edit(kind: .delete, value: nil, row: nil, baseVersion: existing?.baseVersion ?? base?.version ?? 0,
                        baseRow: existing?.baseRow ?? base?.row, isConflicted: existing?.isConflicted ?? false,
                        order: existing?.order ?? nextOrder())
        if existing == nil { try resolveStaleRead(&edit, key: key, policy: policy) }
        edits[key] = edit.kind == .insert && edit.row == nil ? nil : edit
    }

    /// Applies one operation of this context's own save — sealed: every object's row encoded —
    /// to its saved copies, without what a merge does for observers (no conflict check: the
    /// edits are the save; no diff, no change description): how a worker, which nobody
    /// observes, keeps what it saved.
    func applyOwnSave(_ operation: ChangeSet.Operation, sequence: UInt64) {
        switch operation {
        case .save(let save):
            guard let row = save.row else { preconditionFailure("a save of \(schema.name) applied before its change set was sealed") }
            store(row, version: sequence)
        case .delete(_, let key):
            remove(key, sequence: sequence)
        case .bulkUpdate, .bulkDelete:
            break   // a context's save holds objects and deletions only
        }
    }

    /// Appends the unsaved edits to `changes`, in the order the objects were first edited, each
    /// with the row encoded when it was made (so sealing the change set encodes nothing again).
    func appendEdits(to changes: inout ChangeSet) throws {
        // The edits taken out once (no second hash lookup per key), then their indexes sorted by
        // a plain array of orders: reading an edit in the comparison, or moving edits through
        // the sort, would retain and copy their values and rows.
        let listed = Array(edits)
        let orders = listed.map { $0.value.order }
        for index in listed.indices.sorted(by: { orders[$0] < orders[$1] }) {
            let (key, edit) = listed[index]
            switch edit.kind {
            case .insert: changes.appendSave(try editValue(edit), .upsert, row: edit.row, entity: schema.name, baseRow: edit.baseRow)
            case .update: changes.appendSave(try editValue(edit), .update, row: edit.row, entity: schema.name, baseRow: edit.baseRow)
            case .delete: changes.appendDelete(entity: schema.name, key: key)
            }
        }
    }

    /// Makes `operation`, a save or deletion of this context's that failed, an unsaved edit again
    /// (``ObjectGraph/restoreEdits(of:conflicts:)``), conflicted when its key is in `conflicted`.
    func restore(_ operation: ChangeSet.Operation, conflicted: Set<DatabaseValue>) {
        let key: DatabaseValue, edit: Edit
        switch operation {
        case .save(let save):
            guard let row = save.row else { return }
            key = row[schema.primaryKeyIndex]
            edit = Edit(kind: save.mode == .update ? .update : .insert, value: save.object, row: row, baseVersion: 0,
                        baseRow: save.baseRow, isConflicted: conflicted.contains(key), order: nextOrder())
        case .delete(_, let id):
            key = id
            edit = Edit(kind: .delete, value: nil, row: nil, baseVersion: 0, baseRow: nil,
                        isConflicted: conflicted.contains(id), order: nextOrder())
        case .bulkUpdate, .bulkDelete:
            return   // a context's save holds objects and deletions only
        }
        if edits[key] != nil {
            if conflicted.contains(key) { edits[key]!.isConflicted = true }
            return
        }
        edits[key] = edit
    }

    func clearEdits() { edits.removeAll() }
    func saveEditsState() -> [DatabaseValue: Edit] { edits }
    func restoreEditsState(_ state: [DatabaseValue: Edit]) { edits = state }

    // MARK: Merging

    /// Merges `run`, a run of this entity's operations in `operations`, in order.
    ///
    /// A save of a key the table does not hold, with nothing edited or deleted under it, claims a
    /// slot at once (so that a later save of the key finds it: ``ColumnTable/claimNew(_:cells:row:base:)``), but its row is
    /// written and posted to the indexes later, together with the new rows around it — its cells
    /// copied column by column from the ones the change set carries (``CellRows``, built when it
    /// was sealed; made here for saves that carry none), their bytes taken as one arena page
    /// (``ColumnTable/writeNew(_:rows:at:base:version:firstUse:)``), and one index map change per
    /// distinct key (``InMemoryIndex/insertNew(_:of:)``) — before any other operation of the run
    /// is merged, and at its end. Every save is given a free slot up front (what the free list
    /// lacks is added in bulk) and the ones no key claimed are dropped at the end, so no row
    /// grows the columns cell by cell.
    func merge(_ operations: [ChangeSet.Operation], run: Range<Int>, sequence: UInt64, isOwn: Bool, registersNew: Bool,
               policy: MergePolicy, into changes: inout ContextChange.EntityChanges) throws {
        let saves = operations[run].count(where: \.isSave)
        let firstProvided = registersNew && saves > 0 ? saved.provideFreeSlots(saves) : nil
        if registersNew { changes.reserveInserts(saves) }
        // Cells made here for the run's saves that carry none: the cells and each save's row in them.
        var made: (cells: CellRows, rows: [Int: Int])?
        // New rows claimed, to be written and posted together: rows of one `CellRows`, their
        // bytes at one base.
        var batch: (cells: CellRows, base: UInt64)?
        var newSlots: [Int] = []
        var newRows: [Int] = []
        // While every save of the run so far is a new row of the cells that hold exactly the run's
        // saves (a change set of new objects), the inserts are listed at the end of the run, as
        // the cells' key set: hashed when the change set was sealed, not here.
        var insertsLater = registersNew && saves == run.count && changes.isEmpty ? Self.cellsOfEverySave(operations, run) : nil
        func listInsertsNow(before end: Int) {
            guard insertsLater != nil else { return }
            insertsLater = nil
            // Sealed saves, each with its row (they carry cells).
            for case .save(let save) in operations[run.lowerBound..<end] {
                changes.insert(key(of: save.row!), attributes: attributeNames)
            }
        }
        func takeNewRows() {
            defer { batch = nil }
            guard let batch, !newSlots.isEmpty else { return }
            mutationCount &+= 1
            // Each new row's last use is a tick of the clock, in the order they were claimed.
            saved.writeNew(batch.cells, rows: newRows, at: newSlots, base: batch.base, version: sequence,
                           firstUse: clock + 1)
            clock += UInt64(newSlots.count)
            touchNew(newSlots, rows: newRows, of: batch.cells)
            if indexesEnabled { for index in indexes.indices { indexes[index].insertNew(newSlots, of: saved) } }
            if fullText != nil { for slot in newSlots { fullText!.insert(slot, row: saved.rowView(at: slot)) } }
            newSlots.removeAll(keepingCapacity: true)
            newRows.removeAll(keepingCapacity: true)
        }
        // Adds row `row` of `cells`, whose key was just found absent, to the batch of new rows
        // (written first: a batch of other cells), taking the cells' page at its first row.
        func claimNewRow(_ found: ColumnTable.KeyLookup, of cells: CellRows, row: Int) {
            if batch?.cells !== cells { takeNewRows() }
            let base = batch?.base ?? saved.arenaBase(for: cells)
            batch = (cells, base)
            newSlots.append(saved.claimNew(found, cells: cells, row: row, base: base))
            newRows.append(row)
        }
        func cells(of save: ChangeSet.Save, at index: Int) throws -> (CellRows, Int) {
            if let cells = save.cells { return (cells, save.cellRow) }
            if made == nil { made = try makeCells(operations, run: index..<run.upperBound) }
            return (made!.cells, made!.rows[index]!)
        }
        defer {
            takeNewRows()
            if let firstProvided { saved.dropFreeSlots(from: firstProvided) }
        }
        // A change set of new objects (an import's): its rows are claimed straight from the cells,
        // in order, up to the first whose key is held already; the saves from there on are merged
        // one by one, as below. Each save is one row of the cells (``cellsOfEverySave(_:_:)``).
        var first = run.lowerBound
        if let cells = insertsLater, edits.isEmpty, deletions.isEmpty {
            newSlots.reserveCapacity(cells.count)
            newRows.reserveCapacity(cells.count)
            for row in 0..<cells.count {
                let found = saved.find(cells, row: row)
                guard found.slot == nil else { break }
                claimNewRow(found, of: cells, row: row)
                first += 1
            }
        }
        for index in first..<run.upperBound {
            guard case .save(let save) = operations[index] else {
                listInsertsNow(before: index)
                takeNewRows()
                try merge(operations[index], sequence: sequence, isOwn: isOwn, registersNew: registersNew, policy: policy,
                          into: &changes)
                continue
            }
            // A sealed save has its row, made by a context's table of the registered type or
            // checked for that type when the store sealed it (`Store.validate`).
            guard save.row != nil || type(of: save.object) == entityType else {
                throw StrataError(.unknownEntity, "entity name \(schema.name) is used by two types", entity: schema.name)
            }
            guard registersNew else {
                listInsertsNow(before: index)
                takeNewRows()
                try mergeRow(try save.row ?? encode(save.object), sequence: sequence, isOwn: isOwn, registersNew: false,
                             policy: policy, changes: &changes)
                continue
            }
            let (cells, cellRow) = try cells(of: save, at: index)
            let found = saved.find(cells, row: cellRow)
            // The key as a value only where it is looked up or listed: an import's new row needs none.
            func key() throws -> DatabaseValue { self.key(of: try save.row ?? encode(save.object)) }
            if found.slot == nil, try edits.isEmpty || edits[key()] == nil, try deletions.isEmpty || deletions[key()] == nil {
                claimNewRow(found, of: cells, row: cellRow)
                if insertsLater !== cells {
                    listInsertsNow(before: index)
                    changes.insert(try key(), attributes: attributeNames)
                }
                continue
            }
            listInsertsNow(before: index)
            takeNewRows()
            try mergeRow(try save.row ?? encode(save.object), found: found, sequence: sequence, isOwn: isOwn,
                         registersNew: registersNew, policy: policy, changes: &changes)
        }
        if let insertsLater { changes.inserted = insertsLater.keys! }
    }

    /// Marks new rows `slots` (rows `rows` of `cells`) for the snapshot order's next settle: in
    /// the order the cells list their rows in, when they list most of them, so that the settle
    /// need not sort them; else as they came.
    private func touchNew(_ slots: [Int], rows: [Int], of cells: CellRows) {
        guard ordered != nil else { return }
        guard let order = cells.order, rows.count * 4 >= cells.count else {
            for slot in slots { ordered?.touch(slot) }
            return
        }
        var slotOfRow = [Int](repeating: -1, count: cells.count)
        for (row, slot) in zip(rows, slots) { slotOfRow[row] = slot }
        var inOrder: [Int] = []
        inOrder.reserveCapacity(slots.count)
        for row in order where slotOfRow[row] >= 0 { inOrder.append(slotOfRow[row]) }
        ordered?.touch(inOrder: inOrder)
    }

    /// The cells that hold the rows of every save in `run` of `operations` and no other, their
    /// keys distinct, or nil.
    private static func cellsOfEverySave(_ operations: [ChangeSet.Operation], _ run: Range<Int>) -> CellRows? {
        guard case .save(let first) = operations[run.lowerBound], let cells = first.cells, cells.count == run.count,
              cells.keys != nil else { return nil }
        // Each save is one row of them (sealing makes one row per save, in order).
        for case .save(let save) in operations[run] where save.cells !== cells { return nil }
        return cells
    }

    /// The cells of the saves in `run` of `operations` that carry none, and each one's row in them.
    private func makeCells(_ operations: [ChangeSet.Operation], run: Range<Int>) throws -> (CellRows, [Int: Int]) {
        var rows: [[DatabaseValue]] = []
        var positions: [Int: Int] = [:]
        for index in run {
            guard case .save(let save) = operations[index], save.cells == nil else { continue }
            positions[index] = rows.count
            rows.append(try save.row ?? encode(save.object))
        }
        guard let cells = CellRows(rows, attributeCount: schema.attributes.count, keyPosition: schema.primaryKeyIndex,
                                   sort: ordered?.order ?? []) else {
            throw StrataError(.invalidValue, "a change set's values of \(schema.name) exceed 4 GiB together", entity: schema.name)
        }
        return (cells, positions)
    }

    private func merge(_ operation: ChangeSet.Operation, sequence: UInt64, isOwn: Bool, registersNew: Bool,
                       policy: MergePolicy, into changes: inout ContextChange.EntityChanges) throws {
        switch operation {
        case .save(let save):
            try mergeRow(try save.row ?? encode(save.object), sequence: sequence, isOwn: isOwn, registersNew: registersNew,
                         policy: policy, changes: &changes)
        case .delete(_, let key):
            mergeDeletion(key, sequence: sequence, isOwn: isOwn, policy: policy, changes: &changes)
        case .bulkUpdate(_, let target, let assignments):
            var patch = try BulkPatch(assignments, of: self)
            // In slot order: each column, version and index cell is then read and written
            // front to back rather than at random (10,000 of 100,000 slots, in the order the
            // caller listed their IDs, missed the cache at every cell).
            let targets = try targets(target).sorted { $0.slot < $1.slot }
            changes.reserveUpdates(targets.count)
            for (slot, key) in targets {
                if patch.writesInPlace, edits.isEmpty || edits[key] == nil {
                    self.patch(slot, key: key, &patch, sequence: sequence, changes: &changes)
                    continue
                }
                var row = saved.row(at: slot)
                for (position, value) in patch.assignments { row[position] = value }
                try mergeRow(row, sequence: sequence, isOwn: isOwn, registersNew: false, policy: policy, changes: &changes)
            }
            for (index, moves) in patch.moves { indexes[index].apply(moves) }
        case .bulkDelete(_, let target):
            for (_, key) in try targets(target) {
                mergeDeletion(key, sequence: sequence, isOwn: isOwn, policy: policy, changes: &changes)
            }
        }
    }

    /// The slots and keys of the held objects a bulk operation reaches, each once.
    private func targets(_ target: ChangeSet.BulkTarget) throws -> [(slot: Int, key: DatabaseValue)] {
        switch target {
        case .ids(let keys):
            var seen = Set<Int>(minimumCapacity: min(keys.count, saved.count))
            return keys.compactMap { key in saved.slot(of: key).flatMap { seen.insert($0).inserted ? ($0, key) : nil } }
        case .filter(let filter):
            // The saved copies are what a bulk change applies to (edits of them meet it in the merge).
            let resolved = try ResolvedFilter(filter, schema: schema)
            let slots: [Int]
            var rest: ResolvedFilter? = resolved
            if let keys = lookupKeys(resolved), keys.count <= saved.count {
                slots = keys.compactMap(saved.slot(of:))
            } else if let found = fullTextCandidates(resolved) {
                (slots, rest) = found
            } else if let indexed = try indexedCandidates(resolved) {
                slots = indexed.slots
            } else {
                slots = saved.liveSlots
            }
            return slots.filter { rest?.matches(saved.rowView(at: $0)) ?? true }.map { ($0, saved.key(at: $0)) }
        }
    }

    /// A bulk update being merged: what it assigns, worked out once for every object it reaches.
    private struct BulkPatch {
        let assignments: [(position: Int, value: DatabaseValue)]
        /// The assigned attributes' names: the change description of an object where all changed.
        let names: Set<String>
        /// Whether the cells are written in place (``patch(_:key:_:sequence:changes:)``): not
        /// when the update assigns the primary key.
        let writesInPlace: Bool
        /// Per assignment, whether the snapshot order sorts by its attribute…
        let sorts: [Bool]
        /// …and whether the full-text index holds its attribute's tokens.
        let indexesText: [Bool]
        /// The indexes over an assigned attribute, each with the objects it moves, made at the end.
        var moves: [(index: Int, moves: InMemoryIndex<Int>.Moves)]
        /// The assignments that change the object being patched (reused from object to object).
        var changed: [Int] = []

        init(_ assignments: [ChangeSet.Assignment], of table: EntityTable) throws {
            let schema = table.schema
            let assigned = try assignments.map { (position: try schema.requirePosition(of: $0.attribute), value: $0.value) }
            self.assignments = assigned
            names = Set(assignments.map(\.attribute))
            writesInPlace = !assigned.contains { $0.position == schema.primaryKeyIndex }
            let order = table.ordered?.order ?? []
            sorts = assigned.map { assignment in order.contains { $0.position == assignment.position } }
            let text = table.fullText?.positions ?? []
            indexesText = assigned.map { text.contains($0.position) }
            moves = table.indexesEnabled
                ? table.indexes.indices.compactMap { index in table.indexes[index].moves(assigning: assigned).map { (index, $0) } }
                : []
        }
    }

    /// Merges a bulk update into the saved copy in `slot`, which no edit is based on: only the
    /// assigned cells that change are written, and the object is listed for the moves of the
    /// indexes over them (``InMemoryIndex/apply(_:)``, once the update is merged) — what
    /// ``mergeRow(_:found:sequence:isOwn:registersNew:policy:changes:)`` does for a whole row.
    private func patch(_ slot: Int, key: DatabaseValue, _ patch: inout BulkPatch, sequence: UInt64,
                       changes: inout ContextChange.EntityChanges) {
        guard saved.version(at: slot) <= sequence else { return }
        mutationCount &+= 1
        patch.changed.removeAll(keepingCapacity: true)
        for (number, (position, value)) in patch.assignments.enumerated() where !saved.cellEquals(value, at: slot, position) {
            patch.changed.append(number)
        }
        if !patch.changed.isEmpty {
            keepReadCopy(slot, key: key, replacedAt: sequence)
            let oldText = patch.changed.contains { patch.indexesText[$0] } ? saved.row(at: slot) : nil
            if !patch.moves.isEmpty {
                let row = saved.rowView(at: slot)
                for move in patch.moves.indices { indexes[patch.moves[move].index].record(slot, row: row, in: &patch.moves[move].moves) }
            }
            for number in patch.changed { saved.setValue(patch.assignments[number].value, at: slot, patch.assignments[number].position) }
            if patch.changed.contains(where: { patch.sorts[$0] }) { ordered?.touch(slot) }
            if let oldText { fullText?.replace(slot, old: oldText, new: saved.rowView(at: slot)) }
        }
        saved.setVersion(sequence, at: slot)
        clock += 1
        saved.setLastUse(clock, at: slot)
        let names = patch.changed.count == patch.assignments.count
            ? patch.names : Set(patch.changed.map { schema.attributes[patch.assignments[$0].position].name })
        changes.update(key, keys: names)
    }

    /// Keeps the saved copy in `slot` as the caller last read it (``staleReads``), when it is
    /// about to be replaced by the copy at `version`: an edit made from the copy read is based
    /// on it, not on what was merged after the read.
    private func keepReadCopy(_ slot: Int, key: DatabaseValue, replacedAt version: UInt64) {
        let read = saved.readVersion(at: slot)
        if read > 0, read == saved.version(at: slot), version > read, staleReads[key] == nil {
            staleReads[key] = saved.row(at: slot)
        }
    }

    /// Runs `write`, which changes the cells at `changed` positions (nil: any) of the saved copy
    /// in `slot`, and keeps the indexes right: only the indexes over a changed attribute move the
    /// slot, from the first level whose key holds one (`isRead` changing leaves the `feedID`
    /// level of `(feedID, isRead)` alone), and the snapshot order only when a sort attribute
    /// changed. `newRow` is the row written, when the caller has it (else its cells are read).
    private func rewrite(_ slot: Int, changed: [Int]?, newRow: [DatabaseValue]?, write: () -> Void) {
        var moved: [(index: Int, level: Int)] = []
        if indexesEnabled {
            for index in indexes.indices {
                if let level = changed.map(indexes[index].firstLevel(changedBy:)) ?? 0 { moved.append((index, level)) }
            }
        }
        if !moved.isEmpty {
            let view = saved.rowView(at: slot)
            for (index, level) in moved { indexes[index].remove(slot, row: view, fromLevel: level) }
        }
        let oldText = fullText.flatMap { index in
            changed.map { $0.contains(where: index.positions.contains) } ?? true ? saved.row(at: slot) : nil
        }
        write()
        if let oldText {
            if let newRow { fullText?.replace(slot, old: oldText, new: newRow) } else {
                fullText?.replace(slot, old: oldText, new: saved.rowView(at: slot))
            }
        }
        for (index, level) in moved {
            if let newRow {
                indexes[index].insert(slot, row: newRow, fromLevel: level)
            } else {
                indexes[index].insert(slot, row: saved.rowView(at: slot), fromLevel: level)
            }
        }
        if let order = ordered?.order, changed?.contains(where: { position in order.contains { $0.position == position } }) ?? true {
            ordered?.touch(slot)
        }
    }

    /// Merges a saved copy's row (`found`: where its key is, when the caller looked already).
    private func mergeRow(_ row: [DatabaseValue], found: ColumnTable.KeyLookup? = nil, sequence: UInt64, isOwn: Bool,
                          registersNew: Bool, policy: MergePolicy, changes: inout ContextChange.EntityChanges) throws {
        let key = key(of: row)
        let found = found ?? saved.find(key)
        let slot = found.slot
        // Strictly newer copies win; operations of the same change set all apply, in order. A
        // copy read before a deletion merged since (catch-up, corrections) stays deleted.
        if let slot, saved.version(at: slot) > sequence { return }
        if slot == nil, let deleted = deletions[key], deleted > sequence { return }
        guard slot != nil || registersNew || edits[key] != nil else { return }
        if var edit = edits[key], sequence > edit.baseVersion {
            if isOwn {
                edit.baseVersion = sequence
                edits[key] = edit
            } else {
                try resolve(&edit, remote: row, sequence: sequence, policy: policy)
                edits[key] = edit.kind == .insert && edit.row == nil ? nil : edit
            }
        }
        // The slot found above is still the key's (resolving an edit writes no saved copy).
        if let slot {
            let changed = changedPositions(slot, row)
            store(row, version: sequence, claimed: (slot, false), changed: changed)
            changes.update(key, keys: Set(changed.map { schema.attributes[$0].name }))
        } else {
            store(row, version: sequence, claimed: (saved.claim(found), true))
            changes.insert(key, attributes: attributeNames)
        }
    }

    private func mergeDeletion(_ key: DatabaseValue, sequence: UInt64, isOwn: Bool, policy: MergePolicy,
                               changes: inout ContextChange.EntityChanges) {
        let slot = saved.slot(of: key)
        if let slot, saved.version(at: slot) > sequence { return }
        if var edit = edits[key], sequence > edit.baseVersion, !isOwn {
            switch policy {
            case .localWins:
                edit.baseVersion = sequence
                if edit.kind == .update { edit.kind = .insert }
                edits[key] = edit.kind == .delete ? nil : edit
            case .storeWins, .mergeProperties:
                edits[key] = nil
            case .reportConflict:
                edit.isConflicted = true
                edits[key] = edit
            }
        }
        remove(key, sequence: sequence)
        if slot != nil { changes.delete(key) }
    }

    private func resolve(_ edit: inout Edit, remote: [DatabaseValue], sequence: UInt64, policy: MergePolicy) throws {
        switch policy {
        case .localWins:
            edit.baseVersion = sequence
        case .storeWins:
            edit.value = nil
            edit.row = nil
            edit.kind = .insert   // marks the edit for removal by the caller
        case .mergeProperties:
            guard edit.kind != .delete, let local = edit.row else {
                edit.baseVersion = sequence
                return
            }
            let merged = MergePolicy.merged(local: local, base: edit.baseRow, onto: remote)
            edit.value = try decode(merged)
            edit.row = merged
            edit.baseRow = remote
            edit.baseVersion = sequence
        case .reportConflict:
            edit.isConflicted = true
        }
    }

    /// Resolves the conflicted edit of `key` (``MergePolicy/reportConflict``) alone: discards it, or
    /// applies it again on top of the saved copy.
    /// - Throws: `.misuse` when the object has no conflicted edit.
    func resolveConflict(_ key: DatabaseValue, by resolution: ConflictResolution) throws {
        guard var edit = edits[key], edit.isConflicted else {
            throw StrataError(.misuse, "\(schema.name) \(key) has no conflicted edit to resolve", entity: schema.name,
                              objectID: "\(key)")
        }
        switch resolution {
        case .takeStored:
            edits[key] = nil
            return
        case .reapplyEdit:
            let stored = saved.slot(of: key).map { (version: saved.version(at: $0), row: saved.row(at: $0)) }
            edit.isConflicted = false
            edit.baseVersion = stored?.version ?? 0
            if let local = edit.row {
                if let stored {
                    let merged = MergePolicy.merged(local: local, base: edit.baseRow, onto: stored.row)
                    edit.value = try decode(merged)
                    edit.row = merged
                } else {
                    edit.kind = .insert   // deleted since: saved again, whole
                }
            }
            edit.baseRow = stored?.row
            edits[key] = edit
        }
    }

    /// The positions of the attributes whose cells in `slot` differ from `row`'s values.
    private func changedPositions(_ slot: Int, _ row: [DatabaseValue]) -> [Int] {
        row.indices.filter { !saved.cellEquals(row[$0], at: slot, $0) }
    }

    /// Drops saved copies (all of them when `keys` is nil); unsaved edits stay.
    func forget(_ keys: [DatabaseValue]?) {
        for key in keys ?? heldKeys {
            guard let slot = saved.slot(of: key) else { continue }
            removeSlot(slot)
            staleReads[key] = nil
        }
    }

    /// Applies rows re-read from the store (catch-up, corrections; checked when the fetch built
    /// its block): changed ones replace the held copies, deleted ones go. Only held objects are touched unless `includeNew`.
    func reload(_ rows: [[DatabaseValue]], deleted: [DatabaseValue], asOf sequence: UInt64, includeNew: Bool,
                policy: MergePolicy, into changes: inout ContextChange.EntityChanges) throws {
        for row in rows {
            guard includeNew || saved.slot(of: key(of: row)) != nil else { continue }
            try mergeRow(row, sequence: sequence, isOwn: false, registersNew: true, policy: policy, changes: &changes)
        }
        for key in deleted {
            mergeDeletion(key, sequence: sequence, isOwn: false, policy: policy, changes: &changes)
        }
    }

    // MARK: Snapshots

    /// The rows of `saved` (a table's saved copies, never unsaved edits) in the entity's
    /// ``EntitySchema/snapshotOrder`` (ties by key), in a block of at most `first` objects and
    /// then blocks of at most `chunk` (one empty block when there is none): what a snapshot
    /// archives. Reads only `saved`, so it runs on a copy off the main actor.
    static func archiveBlocks(of saved: ColumnTable, first: Int, chunk: Int) throws -> [ColumnBlock] {
        let slots = try Self.slots(of: saved, in: saved.schema.snapshotOrder)
        var starts = [0]
        if slots.count > first { starts += Array(stride(from: first, to: slots.count, by: chunk)) }
        return starts.enumerated().map { number, start in
            let end = number + 1 < starts.count ? starts[number + 1] : slots.count
            return saved.block(slots[start..<end])
        }
    }

    // MARK: Memory

    /// Evicts the least recently used saved copies beyond `limit`, except protected and edited ones.
    func evict(keeping limit: Int, protected: Set<DatabaseValue>) -> Int {
        guard saved.count > limit else { return 0 }
        let candidates = saved.liveSlots.filter { slot in
            let key = saved.key(at: slot)
            return edits[key] == nil && !protected.contains(key)
        }.sorted { saved.lastUse(at: $0) < saved.lastUse(at: $1) }
        let excess = saved.count - limit
        for slot in candidates.prefix(excess) { forget([saved.key(at: slot)]) }
        return min(excess, candidates.count)
    }
}
