import Foundation

/// The operations an ``ObjectGraph`` needs from a table without knowing its entity type.
protocol AnyEntityTable: AnyObject {
    var schema: EntitySchema { get }
    var hasEdits: Bool { get }
    var registeredCount: Int { get }
    func merge(_ operation: ChangeSet.Operation, sequence: UInt64, isOwn: Bool, registersNew: Bool,
               policy: MergePolicy, into changes: inout ContextChange.EntityChanges) throws
    func applyOwnSave(_ operation: ChangeSet.Operation, sequence: UInt64) throws
    func appendEdits(to changes: inout ChangeSet) throws
    func clearEdits()
    func saveEditsState() -> Any
    func restoreEditsState(_ state: Any)
    var conflictingIDs: [DatabaseValue] { get }
    /// Whether merged deletions are remembered (while a fetch is in flight).
    var remembersDeletions: Bool { get set }
    var rememberedDeletionCount: Int { get }
    func evict(keeping limit: Int, protected: Set<DatabaseValue>) -> Int
    func archiveRows() throws -> [[DatabaseValue]]
    func forget(_ keys: [DatabaseValue]?)
}

/// The objects of one entity that a context holds: saved copies with the store version they
/// reflect, unsaved edits with the version they were made on, and (on the main context)
/// in-memory indexes. Not thread-safe: owned by one context's isolation.
final class EntityTable<E: Entity>: AnyEntityTable {
    struct Record {
        var value: E
        var version: UInt64
        var row: [DatabaseValue]?
        var lastUse: UInt64
        /// The version of the copy last handed to the caller (0: never), and that copy when a
        /// merge has replaced it since: an edit is based on what the caller read, not on what
        /// was merged after the read.
        var readVersion: UInt64 = 0
        var readValue: E?
    }

    struct Edit {
        enum Kind { case insert, update, delete }
        var kind: Kind
        var value: E?
        /// The version of the copy the edit was made on (0 for a new object).
        var baseVersion: UInt64
        /// The copy the edit was made on, for property-level merges.
        var base: E?
        var isConflicted = false
    }

    let schema: EntitySchema
    private(set) var records: [E.ID: Record] = [:]
    private(set) var edits: [E.ID: Edit] = [:]
    /// Deletions merged while a fetch was in flight, so that its older result does not bring
    /// the objects back. Kept only while ``remembersDeletions`` (the graph turns it off, and
    /// forgets them all, when its last fetch in flight finishes).
    private var deletions: [E.ID: UInt64] = [:]
    var remembersDeletions = false {
        didSet { if !remembersDeletions { deletions.removeAll() } }
    }
    var rememberedDeletionCount: Int { deletions.count }
    private var indexes: [InMemoryIndex<E.ID>] = []
    private(set) var indexesEnabled = false
    private var clock: UInt64 = 0
    private lazy var encoder = RowEncoder(schema: schema)
    private lazy var decoder = RowDecoder<[DatabaseValue]>(schema: schema)

    init(schema: EntitySchema) {
        self.schema = schema
    }

    var hasEdits: Bool { !edits.isEmpty }
    var registeredCount: Int { records.count }
    var conflictingIDs: [DatabaseValue] { edits.filter(\.value.isConflicted).map(\.key.databaseValue) }

    // MARK: Reading

    /// What the context shows for `id`: its unsaved edit if any, else its saved copy.
    func visible(_ id: E.ID) -> E? {
        if let edit = edits[id] { return edit.value }
        guard records[id] != nil else { return nil }
        clock += 1
        records[id]!.lastUse = clock
        records[id]!.readVersion = records[id]!.version
        records[id]!.readValue = nil
        return records[id]!.value
    }

    /// The version and copy an edit of `id` is based on: what the caller last read.
    private func readBase(_ id: E.ID) -> (version: UInt64, value: E)? {
        guard let record = records[id] else { return nil }
        if record.readVersion > 0, record.readVersion < record.version {
            return (record.readVersion, record.readValue ?? record.value)
        }
        return (record.version, record.value)
    }

    /// An edit made on a copy older than the one held since: a conflict with that newer copy.
    private func resolveStaleRead(_ edit: inout Edit, id: E.ID, policy: MergePolicy) throws {
        guard let record = records[id], edit.baseVersion < record.version else { return }
        try resolve(&edit, id: id, remote: record.value, sequence: record.version, policy: policy)
    }

    func row(_ id: E.ID) throws -> [DatabaseValue] {
        if let row = records[id]?.row { return row }
        let row = try encoder.encode(records[id]!.value)
        if indexesEnabled { records[id]!.row = row }
        return row
    }

    var visibleIDs: [E.ID] {
        var ids = Array(records.keys.filter { edits[$0] == nil })
        ids += edits.compactMap { $0.value.value == nil ? nil : $0.key }
        return ids
    }

    /// The objects matching a query, evaluated in memory over what the context shows.
    func query(_ resolved: ResolvedQuery) throws -> [E] {
        resolved.window(try matchingEntries(resolved)).compactMap { visible($0.id) }
    }

    /// What the context shows for `id`, with its row.
    func visibleRow(_ id: E.ID) throws -> [DatabaseValue]? {
        if let edit = edits[id] { return try edit.value.map { try encoder.encode($0) } }
        return records[id] == nil ? nil : try row(id)
    }

    /// The rows and IDs matching a query's filter, sorted by its order, without its window.
    func matchingEntries(_ resolved: ResolvedQuery) throws -> [(row: [DatabaseValue], id: E.ID)] {
        let candidates = try candidateIDs(resolved.filter)
        var rows: [[DatabaseValue]] = []
        var ids: [E.ID] = []
        for id in candidates {
            if let row = try visibleRow(id), resolved.filter.matches(row) {
                rows.append(row)
                ids.append(id)
            }
        }
        // Sort positions over the rows (a concrete type) rather than the (row, id) pairs: the
        // generic sort moving pairs through witness tables cost ~25k instructions per match.
        let order = rows.indices.sorted { resolved.areInIncreasingOrder(rows[$0], rows[$1]) }
        return order.map { (rows[$0], ids[$0]) }
    }

    /// How many objects the context shows match a query (its window applied), without building
    /// values or sorting: straight from an in-memory index when the filter is exactly equalities
    /// on an index's leading attributes and nothing is being edited, else by evaluating the
    /// filter on the candidates' rows.
    func count(_ resolved: ResolvedQuery) throws -> Int {
        if edits.isEmpty, let equalities = resolved.filter.equalitiesOnly, !schema.indexes.isEmpty {
            try enableIndexes()
            if let total = indexes.lazy.compactMap({ $0.count(exactly: equalities) }).first {
                return resolved.windowCount(total)
            }
        }
        var total = 0
        for id in try candidateIDs(resolved.filter) where try visibleRow(id).map(resolved.filter.matches) == true {
            total += 1
        }
        return resolved.windowCount(total)
    }

    /// The objects a filter has to be evaluated on, each once: the keys it pins when they are
    /// fewer than the objects shown (never more lookups than a scan), else an index's matches,
    /// else every object shown.
    func candidateIDs(_ filter: ResolvedFilter) throws -> [E.ID] {
        if let keys = filter.requiredKeys, keys.count <= records.count + edits.count {
            var seen = Set<E.ID>(minimumCapacity: keys.count)
            return keys.compactMap { key in E.ID.fromDatabaseValue(key).flatMap { seen.insert($0).inserted ? $0 : nil } }
        }
        if let indexed = try indexedCandidates(filter) {
            return Array(indexed) + edits.keys.filter { !indexed.contains($0) }
        }
        return visibleIDs
    }

    private func indexedCandidates(_ filter: ResolvedFilter) throws -> Set<E.ID>? {
        let equalities = filter.requiredEqualities
        guard !equalities.isEmpty, !schema.indexes.isEmpty else { return nil }
        try enableIndexes()
        return indexes.lazy.compactMap { $0.candidates(equalities) }.min { $0.count < $1.count }
    }

    /// Builds the in-memory indexes (once) and keeps them up to date from then on.
    func enableIndexes() throws {
        guard !indexesEnabled else { return }
        indexesEnabled = true
        indexes = try schema.indexes.map { index in
            InMemoryIndex<E.ID>(positions: try index.attributes.map(schema.requirePosition(of:)), schema: schema)
        }
        for id in Array(records.keys) {
            let row = try self.row(id)
            records[id]!.row = row
            for index in indexes { index.insert(id, row: row) }
        }
    }

    // MARK: Registering fetched objects

    /// Registers objects read from the store as of `sequence`, keeping newer copies and edits.
    func register(_ values: [E], asOf sequence: UInt64) throws {
        for value in values {
            let id = value.id
            if let existing = records[id], existing.version >= sequence { continue }
            if let deleted = deletions[id], deleted > sequence { continue }
            try store(value, version: sequence)
        }
    }

    /// Keeps `value` as the saved copy at `version`; `row` is its row when the caller has it.
    private func store(_ value: E, row knownRow: [DatabaseValue]? = nil, version: UInt64) throws {
        let id = value.id
        clock += 1
        let old = records[id]
        defer {
            // Keep what the caller last read, so a later edit is based on it.
            if let old, old.readVersion > 0 {
                records[id]!.readVersion = old.readVersion
                records[id]!.readValue = old.readVersion == old.version ? old.value : old.readValue
            }
        }
        if indexesEnabled {
            if let old = records[id]?.row { for index in indexes { index.remove(id, row: old) } }
            let row = try knownRow ?? encoder.encode(value)
            for index in indexes { index.insert(id, row: row) }
            records[id] = Record(value: value, version: version, row: row, lastUse: clock)
        } else {
            records[id] = Record(value: value, version: version, row: nil, lastUse: clock)
        }
    }

    private func remove(_ id: E.ID, sequence: UInt64) {
        if let old = records.removeValue(forKey: id), let row = old.row {
            for index in indexes { index.remove(id, row: row) }
        }
        if remembersDeletions { deletions[id] = sequence }
    }

    // MARK: Local edits

    func insert(_ value: E, policy: MergePolicy) throws {
        let existing = edits[value.id]
        let base = readBase(value.id)
        var edit = Edit(kind: base == nil && existing?.kind != .update ? .insert : .update, value: value,
                        baseVersion: existing?.baseVersion ?? base?.version ?? 0, base: existing?.base ?? base?.value)
        if existing == nil { try resolveStaleRead(&edit, id: value.id, policy: policy) }
        edits[value.id] = edit.kind == .insert && edit.value == nil ? nil : edit
    }

    func update(_ value: E, policy: MergePolicy) throws {
        guard edits[value.id]?.value != nil || records[value.id] != nil else {
            throw StrataError(.objectNotFound, "cannot update \(schema.name) \(value.id): the context does not hold it; "
                              + "fetch it first or insert it", entity: schema.name, objectID: "\(value.id)")
        }
        let existing = edits[value.id]
        let base = readBase(value.id)
        var edit = Edit(kind: existing?.kind == .insert ? .insert : .update, value: value,
                        baseVersion: existing?.baseVersion ?? base?.version ?? 0,
                        base: existing?.base ?? base?.value, isConflicted: existing?.isConflicted ?? false)
        if existing == nil { try resolveStaleRead(&edit, id: value.id, policy: policy) }
        edits[value.id] = edit.kind == .insert && edit.value == nil ? nil : edit
    }

    func delete(_ id: E.ID, policy: MergePolicy) throws {
        if let existing = edits[id], existing.kind == .insert, records[id] == nil {
            edits[id] = nil
            return
        }
        // An object the context does not hold is deleted blind (base version 0): every change
        // to it merged before the save is a conflict for the merge policy.
        let base = readBase(id)
        let existing = edits[id]
        var edit = Edit(kind: .delete, value: nil, baseVersion: existing?.baseVersion ?? base?.version ?? 0,
                        base: existing?.base ?? base?.value, isConflicted: existing?.isConflicted ?? false)
        if existing == nil { try resolveStaleRead(&edit, id: id, policy: policy) }
        edits[id] = edit.kind == .insert && edit.value == nil ? nil : edit
    }

    /// Applies one operation of this context's own save to its saved copies, without what a merge
    /// does for observers (no conflict check: the edits are the save; no diff, no change
    /// description): how a worker, which nobody observes, keeps what it saved.
    func applyOwnSave(_ operation: ChangeSet.Operation, sequence: UInt64) throws {
        switch operation {
        case .save(let object, _, let row):
            guard let value = object as? E else { return }
            try store(value, row: row, version: sequence)
        case .delete(_, let key):
            guard let id = E.ID.fromDatabaseValue(key) else { return }
            remove(id, sequence: sequence)
        case .bulkUpdate, .bulkDelete:
            break   // a context's save holds objects and deletions only
        }
    }

    func appendEdits(to changes: inout ChangeSet) throws {
        // Sort the keys, not the (key, edit) pairs: moving whole edits (two entity copies each)
        // through an unspecialized generic sort cost ~60k instructions per edit.
        for id in sortedIdentifiers(Array(edits.keys)) {
            guard let edit = edits[id] else { continue }
            switch edit.kind {
            case .insert: changes.upsert(edit.value!)
            case .update: changes.update(edit.value!)
            case .delete: changes.delete(E.self, id: id)
            }
        }
    }

    func clearEdits() { edits.removeAll() }
    func saveEditsState() -> Any { edits }
    func restoreEditsState(_ state: Any) { edits = state as? [E.ID: Edit] ?? [:] }

    func discardEdit(_ id: E.ID) { edits[id] = nil }

    // MARK: Merging

    func merge(_ operation: ChangeSet.Operation, sequence: UInt64, isOwn: Bool, registersNew: Bool,
               policy: MergePolicy, into changes: inout ContextChange.EntityChanges) throws {
        switch operation {
        case .save(let object, _, let row):
            guard let value = object as? E else { return }
            try mergeValue(value, row: row, sequence: sequence, isOwn: isOwn, registersNew: registersNew, policy: policy,
                           changes: &changes)
        case .delete(_, let key):
            guard let id = E.ID.fromDatabaseValue(key) else { return }
            mergeDeletion(id, sequence: sequence, isOwn: isOwn, policy: policy, changes: &changes)
        case .bulkUpdate(_, let target, let assignments):
            let positions = try assignments.map { (try schema.requirePosition(of: $0.attribute), $0.value) }
            for id in try targets(target) {
                var row = try self.row(id)
                for (position, value) in positions { row[position] = value }
                try mergeValue(try decoder.decode(E.self, from: row), row: row, sequence: sequence, isOwn: isOwn,
                               registersNew: false, policy: policy, changes: &changes)
            }
        case .bulkDelete(_, let target):
            for id in try targets(target) {
                mergeDeletion(id, sequence: sequence, isOwn: isOwn, policy: policy, changes: &changes)
            }
        }
    }

    /// The held objects a bulk operation reaches, each once.
    private func targets(_ target: ChangeSet.BulkTarget) throws -> [E.ID] {
        let resolved: ResolvedFilter
        switch target {
        case .ids(let keys):
            var seen = Set<E.ID>(minimumCapacity: min(keys.count, records.count))
            return keys.compactMap { key in
                E.ID.fromDatabaseValue(key).flatMap { records[$0] != nil && seen.insert($0).inserted ? $0 : nil }
            }
        case .filter(let filter): resolved = try ResolvedFilter(filter, schema: schema)
        }
        var ids: [E.ID] = []
        for id in try candidateIDs(resolved) where records[id] != nil {
            if resolved.matches(try row(id)) { ids.append(id) }
        }
        return ids
    }

    /// Merges a saved copy. `row`, when the caller has it, is `value`'s row: the value is then
    /// never encoded (otherwise at most once, for the diff and the indexes together).
    private func mergeValue(_ value: E, row: [DatabaseValue]? = nil, sequence: UInt64, isOwn: Bool, registersNew: Bool,
                            policy: MergePolicy, changes: inout ContextChange.EntityChanges) throws {
        let id = value.id
        let existing = records[id]
        // Strictly newer copies win; operations of the same change set all apply, in order. A
        // copy read before a deletion merged since (catch-up, corrections) stays deleted.
        if let existing, existing.version > sequence { return }
        if existing == nil, let deleted = deletions[id], deleted > sequence { return }
        guard existing != nil || registersNew || edits[id] != nil else { return }
        if var edit = edits[id], sequence > edit.baseVersion {
            if isOwn {
                edit.baseVersion = sequence
                edits[id] = edit
            } else {
                try resolve(&edit, id: id, remote: value, sequence: sequence, policy: policy)
                edits[id] = edit.kind == .insert && edit.value == nil ? nil : edit
            }
        }
        let key = id.databaseValue
        if let existing {
            let newRow = try row ?? encoder.encode(value)
            let changed = try changedKeys(existing.row ?? encoder.encode(existing.value), newRow)
            try store(value, row: newRow, version: sequence)
            changes.update(key, keys: changed)
        } else {
            try store(value, row: row, version: sequence)
            changes.insert(key)
        }
    }

    private func mergeDeletion(_ id: E.ID, sequence: UInt64, isOwn: Bool, policy: MergePolicy,
                               changes: inout ContextChange.EntityChanges) {
        if let existing = records[id], existing.version > sequence { return }
        if var edit = edits[id], sequence > edit.baseVersion, !isOwn {
            switch policy {
            case .localWins:
                edit.baseVersion = sequence
                if edit.kind == .update { edit.kind = .insert }
                edits[id] = edit.kind == .delete ? nil : edit
            case .storeWins, .mergeProperties:
                edits[id] = nil
            case .reportConflict:
                edit.isConflicted = true
                edits[id] = edit
            }
        }
        let wasHeld = records[id] != nil
        remove(id, sequence: sequence)
        if wasHeld { changes.delete(id.databaseValue) }
    }

    private func resolve(_ edit: inout Edit, id: E.ID, remote: E, sequence: UInt64, policy: MergePolicy) throws {
        switch policy {
        case .localWins:
            edit.baseVersion = sequence
        case .storeWins:
            edit.value = nil
            edit.kind = .insert   // marks the edit for removal by the caller
        case .mergeProperties:
            guard edit.kind != .delete, let local = edit.value else {
                edit.baseVersion = sequence
                return
            }
            let localRow = try encoder.encode(local)
            let baseRow = try edit.base.map { try encoder.encode($0) }
            var merged = try encoder.encode(remote)
            for position in merged.indices where baseRow == nil || baseRow![position] != localRow[position] {
                merged[position] = localRow[position]
            }
            edit.value = try decoder.decode(E.self, from: merged)
            edit.base = remote
            edit.baseVersion = sequence
        case .reportConflict:
            edit.isConflicted = true
        }
    }

    /// The attributes whose values differ between two rows of this entity.
    private func changedKeys(_ before: [DatabaseValue], _ after: [DatabaseValue]) -> Set<String> {
        var keys: Set<String> = []
        for position in before.indices where before[position] != after[position] {
            keys.insert(schema.attributes[position].name)
        }
        return keys
    }

    /// Drops saved copies (all of them when `keys` is nil); unsaved edits stay.
    func forget(_ keys: [DatabaseValue]?) {
        let ids = keys.map { $0.compactMap(E.ID.fromDatabaseValue) } ?? Array(records.keys)
        for id in ids {
            if let row = records.removeValue(forKey: id)?.row { for index in indexes { index.remove(id, row: row) } }
        }
    }

    /// The saved copies' primary keys.
    var heldKeys: [DatabaseValue] { records.keys.map(\.databaseValue) }

    // MARK: Snapshots

    /// The saved copies' rows, in primary-key order (unsaved edits are never archived).
    func archiveRows() throws -> [[DatabaseValue]] {
        try sortedIdentifiers(Array(records.keys)).map { try row($0) }
    }

    /// Fills the table from decoded snapshot rows, as of `sequence`.
    func fill(_ values: [E], rows: [[DatabaseValue]], asOf sequence: UInt64) throws {
        records.reserveCapacity(records.count + rows.count)
        for (value, row) in zip(values, rows) {
            clock += 1
            records[value.id] = Record(value: value, version: sequence, row: indexesEnabled ? row : nil, lastUse: clock)
            if indexesEnabled { for index in indexes { index.insert(value.id, row: row) } }
        }
    }

    /// Applies objects re-read from the store (catch-up): changed ones replace the held copies,
    /// deleted ones go. Only held objects are touched unless `includeNew`.
    func reload(_ values: [E], deleted: [E.ID], asOf sequence: UInt64, includeNew: Bool, policy: MergePolicy,
                into changes: inout ContextChange.EntityChanges) throws {
        for value in values where includeNew || records[value.id] != nil {
            try mergeValue(value, sequence: sequence, isOwn: false, registersNew: true, policy: policy, changes: &changes)
        }
        for id in deleted {
            mergeDeletion(id, sequence: sequence, isOwn: false, policy: policy, changes: &changes)
        }
    }

    // MARK: Memory

    /// Evicts the least recently used saved copies beyond `limit`, except protected and edited ones.
    func evict(keeping limit: Int, protected: Set<DatabaseValue>) -> Int {
        guard records.count > limit else { return 0 }
        let candidates = records.filter { edits[$0.key] == nil && !protected.contains($0.key.databaseValue) }
            .sorted { $0.value.lastUse < $1.value.lastUse }
        let excess = records.count - limit
        for (id, record) in candidates.prefix(excess) {
            records[id] = nil
            if let row = record.row { for index in indexes { index.remove(id, row: row) } }
        }
        return min(excess, candidates.count)
    }
}

/// `ids` in ascending order, with specializations for the identifier types: a sort of strings
/// through witness tables (the tables' generic code is not specialized for the app's entity
/// types) costs over 20k instructions per element, the specialized one a small fraction of it.
@_specialize(where T == String)
@_specialize(where T == Int64)
@_specialize(where T == Int)
@_specialize(where T == UUID)
func sortedIdentifiers<T: Comparable>(_ ids: [T]) -> [T] { ids.sorted() }
