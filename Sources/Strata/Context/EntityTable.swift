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
    /// Per slot of `saved`, what the engine keeps beside the row: versions, reads, last uses.
    ///
    /// `@exclusivity(unchecked)`, like the cells it goes with (``ColumnTable``): it is touched on
    /// every slot a merge writes, and no two accesses can overlap — the table is confined to one
    /// context's isolation, the records are plain integers, and each access is one call into
    /// ``SlotRecords``, which runs no code of the table's or the app's while it holds the access.
    @exclusivity(unchecked) var records = SlotRecords()
    /// Values built from saved copies, kept while their rows are unchanged (``ValueCache``).
    /// Checked: it holds app values, and dropping one may run app code (a deinit).
    var values: ValueCache
    var edits: [DatabaseValue: Edit] = [:] {
        didSet { mutationCount &+= 1 }
    }
    /// How many times the table changed other than by a read: a merge prepared off the main
    /// actor on a copy of the table replaces it only when this has not moved since the copy.
    var mutationCount: UInt64 = 0
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
    var staleReads: [DatabaseValue: [DatabaseValue]] = [:]
    /// Deletions merged while a fetch was in flight, so that its older result does not bring
    /// the objects back. Kept only while ``remembersDeletions`` (the graph turns it off, and
    /// forgets them all, when its last fetch in flight finishes).
    var deletions: [DatabaseValue: UInt64] = [:]
    var remembersDeletions = false {
        didSet { if !remembersDeletions { deletions.removeAll() } }
    }
    var rememberedDeletionCount: Int { deletions.count }
    /// In-memory indexes over the saved copies, whose postings are slots.
    var indexes: [InMemoryIndex<Int>] = []
    /// The inverted index of the entity's full-text attributes, when it declares some (kept with
    /// `indexes`): the candidates of a `.matches` condition.
    var fullText: FullTextIndex?
    /// The saved copies in the entity's snapshot order, when it declares one (kept with `indexes`).
    var ordered: SortedIndex?
    var indexesEnabled = false
    var clock: UInt64 = 0
    /// The names of the entity's attributes: what changed in an object replaced whole.
    lazy var attributeNames = Set(schema.attributes.map(\.name))
    lazy var encoder = RowEncoder(schema: schema)
    lazy var rowDecoder = RowDecoder<[DatabaseValue]>(schema: schema)
    lazy var cellDecoder = RowDecoder<ColumnTable.RowView>(schema: schema)

    /// A table for `type`'s objects that keeps at most `valueCacheLimit` values built from saved
    /// copies (see ``ValueCache``).
    init(type: any Entity.Type, schema: EntitySchema, valueCacheLimit: Int) {
        self.entityType = type
        self.schema = schema
        self.saved = ColumnTable(schema: schema)
        self.values = ValueCache(limit: valueCacheLimit)
    }

    /// A copy of `other` that shares its storage until either is written (see
    /// ``ColumnTable/copy()``): what a merge prepared off the main actor works on. The copy
    /// remembers merged deletions whatever `other` does (a fetch may start before the copy
    /// replaces `other`; ``ObjectGraph/adopt(_:)`` then keeps or forgets them).
    init(copying other: EntityTable) {
        entityType = other.entityType
        schema = other.schema
        saved = other.saved.copy()
        records = other.records
        // The copy starts without built values: `replayReads(of:)` takes them over when it
        // replaces `other`.
        values = ValueCache(limit: other.values.limit)
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

    func key(of row: [DatabaseValue]) -> DatabaseValue { row[schema.primaryKeyIndex] }

    // MARK: Reading rows

    /// Marks the saved copy in `slot` as read by the caller now (its version is what an edit
    /// made from it is based on, and it is recently used).
    func markRead(_ slot: Int) {
        if readLog != nil { readLog!.append(ReadMark(key: saved.key(at: slot), slot: slot, version: records.version(at: slot))) }
        clock += 1
        records.setLastUse(clock, at: slot)
        let version = records.version(at: slot)
        if records.readVersion(at: slot) != version {
            records.setReadVersion(version, at: slot)
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
        // A value whose row the merge wrote is never handed out: the merge wrote it at its change
        // set's sequence, newer than any version `old` held (`cachedValue` compares them).
        values = old.values
        old.values.removeAll()
        clock = max(clock, old.clock)
        for mark in old.readLog ?? [] {
            guard let slot = saved.slot(of: mark.key) else { continue }
            if records.version(at: slot) == mark.version {
                markRead(slot)
                continue
            }
            clock += 1
            records.setLastUse(clock, at: slot)
            records.setReadVersion(mark.version, at: slot)
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

    /// Keeps `row` as the saved copy at `version`, updating the indexes and remembering the copy
    /// the caller last read when a newer one replaces it.
    func store(_ row: [DatabaseValue], version: UInt64) {
        // One hash lookup: the key's slot, or a new one claimed for it.
        store(row, version: version, claimed: saved.claim(key(of: row)))
    }

    /// ``store(_:version:)`` into the slot the caller already found or claimed for the row's key.
    ///
    /// `changed`, when the caller knows them, are the positions whose cells the row changes in a
    /// slot that holds one: the indexes move the slot only from the first level over a changed
    /// attribute, and the snapshot order only when a sort attribute changed.
    func store(_ row: [DatabaseValue], version: UInt64, claimed: (slot: Int, isNew: Bool), changed: [Int]? = nil) {
        mutationCount &+= 1
        let key = key(of: row)
        let (slot, isNew) = claimed
        if isNew {
            records.claim(slot)
            saved.write(row, at: slot)
            records.setVersion(version, at: slot)
            values.forget(slot)
            if indexesEnabled { for index in indexes.indices { indexes[index].insertNew(slot, row: row) } }
            fullText?.insert(slot, row: row)
            ordered?.touch(slot)
        } else {
            keepReadCopy(slot, key: key, replacedAt: version)
            rewrite(slot, changed: changed, newRow: row) {
                saved.write(row, at: slot)
                records.setVersion(version, at: slot)
                values.forget(slot)
            }
        }
        clock += 1
        records.setLastUse(clock, at: slot)
    }

    /// Makes room in the saved copies for `count` new objects, in bulk.
    func reserve(forNew count: Int) {
        saved.addFreeSlots(count)
        records.grow(to: saved.slotCount)
    }

    func remove(_ key: DatabaseValue, sequence: UInt64) {
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
        values.forget(slot)
        saved.remove(at: slot)
    }

    /// Keeps the saved copy in `slot` as the caller last read it (``staleReads``), when it is
    /// about to be replaced by the copy at `version`: an edit made from the copy read is based
    /// on it, not on what was merged after the read.
    func keepReadCopy(_ slot: Int, key: DatabaseValue, replacedAt version: UInt64) {
        let read = records.readVersion(at: slot)
        if read > 0, read == records.version(at: slot), version > read, staleReads[key] == nil {
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


    /// The positions of the attributes whose cells in `slot` differ from `row`'s values.
    func changedPositions(_ slot: Int, _ row: [DatabaseValue]) -> [Int] {
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
        }.sorted { records.lastUse(at: $0) < records.lastUse(at: $1) }
        let excess = saved.count - limit
        for slot in candidates.prefix(excess) { forget([saved.key(at: slot)]) }
        return min(excess, candidates.count)
    }
}
