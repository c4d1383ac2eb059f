import Foundation

/// A batch of changes submitted to a ``Store`` as one unit: all of it is committed or none of it.
///
/// Change sets are `Sendable` values, so a worker can build one and hand it to the store from any
/// thread. Consecutive change sets coalesce into one SQLite transaction, each in its own savepoint.
///
/// ```swift
/// var changes = ChangeSet()
/// changes.upsert(article)
/// changes.delete(Article.self, id: "old-1")
/// changes.updateAll(Article.self, ids: readIDs, set: ["isRead": true])
/// try store.submit(changes)
/// ```
public struct ChangeSet: Sendable {
    enum Operation: Sendable {
        /// An object to write (``Save``).
        case save(Save)
        case delete(entity: String, id: DatabaseValue)
        case bulkUpdate(entity: String, target: BulkTarget, assignments: [Assignment])
        case bulkDelete(entity: String, target: BulkTarget)

        var entityName: String {
            switch self {
            case .save(let save): return save.entity
            case .delete(let entity, _), .bulkUpdate(let entity, _, _), .bulkDelete(let entity, _): return entity
            }
        }

        /// Whether this is a save.
        var isSave: Bool { if case .save = self { true } else { false } }
    }

    /// A save's parts, in one box: an operation is copied as one reference (a merge reads
    /// thousands out of the array; inline, each read copied the object, an existential boxed on
    /// the heap, its row and its entity's name).
    final class Save: Sendable {
        let object: any Entity
        let mode: SaveMode
        /// The object's row once the store sealed the change set (encoded once, on the
        /// submitting thread: the writer binds it, merges and overlays use it as is).
        let row: [DatabaseValue]?
        /// The object's entity's name, asked of the type once, when the operation is made (the
        /// default ``Entity/entityName`` costs a locked lookup).
        let entity: String
        /// The row's cells, when the change set was sealed for a context to merge: row
        /// `cellRow` of the cells of the saves of its entity run (see ``sealed(buildsCells:_:)``).
        let cells: CellRows?
        let cellRow: Int
        /// The row of the copy a context's edit was made on (nil for a new object, or a save
        /// made with the change set's own API): what the edit changed is what differs from it.
        /// The writer resolves a conflict with a change committed from outside by it.
        let baseRow: [DatabaseValue]?

        init(_ object: any Entity, _ mode: SaveMode, row: [DatabaseValue]?, entity: String, cells: CellRows? = nil,
             cellRow: Int = 0, baseRow: [DatabaseValue]? = nil) {
            self.object = object
            self.mode = mode
            self.row = row
            self.entity = entity
            self.cells = cells
            self.cellRow = cellRow
            self.baseRow = baseRow
        }

        /// The same save with its row (and cells) now known.
        func with(row: [DatabaseValue], cells: CellRows? = nil, cellRow: Int = 0) -> Save {
            Save(object, mode, row: row, entity: entity, cells: cells, cellRow: cellRow, baseRow: baseRow)
        }
    }

    enum SaveMode: Sendable { case insert, update, upsert }

    enum BulkTarget: Sendable {
        case ids([DatabaseValue])
        case filter(Filter)
    }

    struct Assignment: Sendable {
        let attribute: String
        let value: DatabaseValue
    }

    private(set) var operations: [Operation] = []
    /// The operations in runs of one entity's, in order: what is looked up per entity (a table,
    /// a schema) is looked up once per run — a save lists thousands of one entity in a row. Kept
    /// as operations are appended, so that each context merging the change set does not find
    /// them again.
    private(set) var entityRuns: [(entity: String, range: Range<Int>)] = []
    /// The context that made the change set, if any: merges skip conflict checks for their own saves.
    var author: ContextIdentity?
    /// The author the store's history records for this change set (``HistoryTransaction/author``),
    /// for example `"sync"` for what a sync engine applies, so that it can skip its own changes
    /// when it reads the history. Nil records the name of the context that saved it, if any.
    ///
    /// ```swift
    /// var changes = ChangeSet()
    /// changes.transactionAuthor = "sync"
    /// changes.upsert(articleFromServer)
    /// try store.submit(changes)
    /// ```
    public var transactionAuthor: String?
    /// The merge policy of the context that made the change set: how the writer resolves a save
    /// or deletion of an object that someone outside the store changed after the context read
    /// it. Nil for a change set made with this type's API, which writes what it holds.
    var policy: MergePolicy?
    /// Whether the change set reports what someone outside the store committed (another
    /// connection or process, the `sqlite3` shell, ``Store/write(_:)``): already in the file, so
    /// the writer applies nothing; contexts merge it like any other.
    var isOutside = false
    /// Writes of stored values (``setStoredValue(_:forKey:)``), in order: nil removes the key.
    var storedValueWrites: [StoredValueWrite] = []

    /// An empty change set.
    public init() {}

    /// Whether the change set holds no change: no operation and no stored value written.
    public var isEmpty: Bool { operations.isEmpty && storedValueWrites.isEmpty }
    /// The number of operations.
    public var count: Int { operations.count }

    /// Inserts a new object. Fails (the whole change set) if the ID exists.
    public mutating func insert<E: Entity>(_ object: E) { appendSave(object, .insert, row: nil, entity: E.entityName) }
    /// Replaces an existing object. Fails (the whole change set) with ``StrataError/Code/objectNotFound`` if it does not exist.
    public mutating func update<E: Entity>(_ object: E) { appendSave(object, .update, row: nil, entity: E.entityName) }
    /// Inserts the object, or replaces it if its ID exists.
    public mutating func upsert<E: Entity>(_ object: E) { appendSave(object, .upsert, row: nil, entity: E.entityName) }
    /// Deletes an object by ID. Deleting an ID the store does not have succeeds and changes
    /// nothing: the object is absent afterwards, as asked. (An ``update(_:)`` of a missing object
    /// fails instead, because its values would be lost.) A sync can apply a server's deletions
    /// whether or not it ever had the objects.
    public mutating func delete<E: Entity>(_ type: E.Type, id: E.ID) {
        appendDelete(entity: E.entityName, key: id.databaseValue)
    }
    /// Deletes an object.
    public mutating func delete<E: Entity>(_ object: E) { delete(E.self, id: object.id) }

    /// Sets attributes of every object whose ID is in `ids`, in one statement, without loading them.
    public mutating func updateAll<E: Entity, C: Collection>(
        _ type: E.Type, ids: C, set values: [String: any DatabaseValueConvertible]
    ) where C.Element == E.ID {
        append(.bulkUpdate(entity: E.entityName, target: .ids(ids.map(\.databaseValue)), assignments: Self.assignments(values)))
    }

    /// Sets attributes of every object matching `filter`, in one statement, without loading them.
    public mutating func updateAll<E: Entity>(
        _ type: E.Type, where filter: Filter, set values: [String: any DatabaseValueConvertible]
    ) {
        append(.bulkUpdate(entity: E.entityName, target: .filter(filter), assignments: Self.assignments(values)))
    }

    /// Deletes every object whose ID is in `ids`, in one statement. IDs that are not in the store
    /// are skipped, as ``delete(_:id:)`` skips them.
    public mutating func deleteAll<E: Entity, C: Collection>(_ type: E.Type, ids: C) where C.Element == E.ID {
        append(.bulkDelete(entity: E.entityName, target: .ids(ids.map(\.databaseValue))))
    }

    /// Deletes every object matching `filter`, in one statement.
    public mutating func deleteAll<E: Entity>(_ type: E.Type, where filter: Filter) {
        append(.bulkDelete(entity: E.entityName, target: .filter(filter)))
    }

    /// How many objects merging the change set reaches, counted up to `limit`: one per saved or
    /// deleted object, one per ID a bulk operation lists, and `limit` for a bulk operation by
    /// filter (it may reach every object). How a context decides where to merge it, and how much
    /// one main-actor job merges; stops counting at `limit`, and looks at no operation when there
    /// are that many.
    func reach(upTo limit: Int) -> Int {
        if operations.count >= limit { return limit }
        var total = 0
        for index in operations.indices {
            switch operations[index] {
            case .save, .delete: total += 1
            case .bulkUpdate(_, .ids(let ids), _), .bulkDelete(_, .ids(let ids)): total += ids.count
            case .bulkUpdate(_, .filter, _), .bulkDelete(_, .filter): return limit
            }
            if total >= limit { return limit }
        }
        return total
    }

    /// The primary keys each entity's operations name; nil for an entity with an operation by
    /// filter (any of its objects may be affected).
    func touchedKeys() -> [String: [DatabaseValue]?] {
        var result: [String: [DatabaseValue]?] = [:]
        for operation in operations {
            let entity = operation.entityName
            if result[entity] == .some(nil) { continue }
            switch operation {
            case .save(let save): result[entity, default: []]?.append(save.object.id.databaseValue)
            case .delete(_, let id): result[entity, default: []]?.append(id)
            case .bulkUpdate(_, .ids(let ids), _), .bulkDelete(_, .ids(let ids)): result[entity, default: []]?.append(contentsOf: ids)
            case .bulkUpdate(_, .filter, _), .bulkDelete(_, .filter): result[entity] = .some(nil)
            }
        }
        return result
    }

    /// ``touchedKeys()`` hashed, for asking other change sets whether they touch them (``touches(_:)``).
    func touchedKeySets() -> [String: Set<DatabaseValue>?] {
        touchedKeys().mapValues { $0.map(Set.init) }
    }

    /// Whether this change set may write an object among `keys` (from ``touchedKeySets()``).
    /// Costs this change set's size, whatever the size of `keys`; a run of saves sealed with
    /// cells whose keys are hashed already (``CellRows/keys``) costs the smaller of the two.
    func touches(_ keys: [String: Set<DatabaseValue>?]) -> Bool {
        for (entity, run) in entityRuns {
            guard let theirs = keys[entity] else { continue }
            guard let theirs else { return true }
            // Saves of a run share their cells: each cells' keys are compared once.
            var compared: CellRows?
            for index in run {
                switch operations[index] {
                case .save(let save):
                    if let cells = save.cells, let mine = cells.keys {
                        guard cells !== compared else { continue }
                        compared = cells
                        let overlap = mine.count < theirs.count
                            ? mine.contains(where: theirs.contains) : theirs.contains(where: mine.contains)
                        if overlap { return true }
                    } else if theirs.contains(save.object.id.databaseValue) {
                        return true
                    }
                case .delete(_, let id):
                    if theirs.contains(id) { return true }
                case .bulkUpdate(_, .ids(let ids), _), .bulkDelete(_, .ids(let ids)):
                    if ids.contains(where: theirs.contains) { return true }
                case .bulkUpdate(_, .filter, _), .bulkDelete(_, .filter):
                    return true
                }
            }
        }
        return false
    }

    /// The same change set with every object's row encoded (by the entity's row codec), so that
    /// nothing downstream encodes it again, and — when `buildsCells` (a context will merge it) —
    /// the rows of each run of one entity's saves in cell form (``CellRows``), so that merging
    /// them copies cells: the work is done here, on the thread that saves, rather than where
    /// change sets are merged one after another.
    /// - Throws: the first object that cannot be stored (an unstorable value, a codec that does
    ///   not match the schema), naming it.
    func sealed(buildsCells: Bool, _ makeEncoder: (String) throws -> RowEncoder) throws -> ChangeSet {
        var sealed = self
        // One encoder per entity, looked up once per run.
        var encoders: [String: RowEncoder] = [:]
        for (entity, run) in sealed.entityRuns {
            var encoder: RowEncoder? = encoders[entity]
            func encoded(_ save: Save) throws -> [DatabaseValue] {
                if let row = save.row { return row }
                let found = try encoder ?? makeEncoder(entity)
                encoder = found
                return try found.encode(save.object)
            }
            // The run's saves still without cells, and their rows: none for an entity the main
            // context does not keep (it registers none of them).
            var positions: [Int] = []
            var rows: [[DatabaseValue]] = []
            if buildsCells, encoder == nil { encoder = try makeEncoder(entity) }
            let cellsWanted = buildsCells && encoder?.schema.residency != .notKept
            for index in run {
                guard case .save(let save) = sealed.operations[index] else { continue }
                let row = try encoded(save)
                if cellsWanted, save.cells == nil {
                    positions.append(index)
                    rows.append(row)
                } else if save.row == nil {
                    sealed.operations[index] = .save(save.with(row: row))
                }
            }
            if !positions.isEmpty {
                let schema = try (encoder ?? makeEncoder(entity)).schema
                // Listed in the snapshot order too, as the main context's sorted index places them.
                let sort = schema.snapshotOrder.isEmpty
                    ? [] : try ResolvedQuery(schema: schema, filter: .all, sortKeys: schema.snapshotOrder).sort
                let cells = CellRows(rows, attributeCount: schema.attributes.count, keyPosition: schema.primaryKeyIndex,
                                     sort: sort)
                for (cellRow, (index, row)) in zip(positions, rows).enumerated() {
                    guard case .save(let save) = sealed.operations[index] else { continue }
                    sealed.operations[index] = .save(save.with(row: row, cells: cells, cellRow: cellRow))
                }
            }
            if let encoder { encoders[entity] = encoder }
        }
        return sealed
    }

    /// Appends a save of `object`; `row`, when the caller has it, is its row (the change set is
    /// then sealed for it already).
    mutating func appendSave(_ object: any Entity, _ mode: SaveMode, row: [DatabaseValue]?, entity: String,
                             baseRow: [DatabaseValue]? = nil) {
        append(.save(Save(object, mode, row: row, entity: entity, baseRow: baseRow)))
    }

    /// Appends a deletion by primary key.
    mutating func appendDelete(entity: String, key: DatabaseValue) {
        append(.delete(entity: entity, id: key))
    }

    /// Appends every operation of `other`, after this one's, and its writes of stored values
    /// after this one's.
    public mutating func append(contentsOf other: ChangeSet) {
        storedValueWrites.append(contentsOf: other.storedValueWrites)
        let offset = operations.count
        operations.append(contentsOf: other.operations)
        for (entity, range) in other.entityRuns {
            extendRuns(entity: entity, by: range.lowerBound + offset..<range.upperBound + offset)
        }
    }

    /// Appends `operation`, extending the last entity run or starting one.
    mutating func append(_ operation: Operation) {
        let position = operations.count
        extendRuns(entity: operation.entityName, by: position..<position + 1)
        operations.append(operation)
    }

    /// Adds `range` (just after the last run's) of `entity`'s operations to the runs.
    private mutating func extendRuns(entity: String, by range: Range<Int>) {
        if let last = entityRuns.indices.last, entityRuns[last].entity == entity {
            entityRuns[last].range = entityRuns[last].range.lowerBound..<range.upperBound
        } else {
            entityRuns.append((entity, range))
        }
    }

    static func assignments(_ values: [String: any DatabaseValueConvertible]) -> [Assignment] {
        values.keys.sorted().map { Assignment(attribute: $0, value: values[$0]!.databaseValue) }
    }
}
