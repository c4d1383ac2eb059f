import Foundation

/// One run of an entity's operations being merged into its table, in order
/// (``EntityTable/merge(_:run:sequence:isOwn:registersNew:policy:into:)``).
///
/// A save of a key the table does not hold, with nothing edited or deleted under it, claims a
/// slot at once (so that a later save of the key finds it: ``ColumnTable/claimNew(_:cells:row:base:)``),
/// but its row is written and posted to the indexes later, together with the new rows around it
/// (``EntityTable/writeNewRows(_:rows:at:base:version:)``) — its cells copied column by column
/// from the ones the change set carries (``CellRows``, built when it was sealed; made here for
/// saves that carry none), their bytes taken as one arena page — before any other operation of
/// the run is merged, and at its end. Every save is given a free slot up front (what the free
/// list lacks is added in bulk) and the ones no key claimed are dropped at the end, so no row
/// grows the columns cell by cell.
struct RunMerge {
    let table: EntityTable
    let operations: [ChangeSet.Operation]
    let run: Range<Int>
    let sequence: UInt64
    let isOwn: Bool
    let registersNew: Bool
    let policy: MergePolicy

    /// Cells made here for the run's saves that carry none: the cells and each save's row in them.
    private var made: (cells: CellRows, rows: [Int: Int])?
    /// New rows claimed, to be written and posted together: rows of one `CellRows`, their bytes
    /// at one base, and the slots they claimed.
    private var batch: (cells: CellRows, base: UInt64)?
    private var newSlots: [Int] = []
    private var newRows: [Int] = []
    /// While every save of the run so far is a new row of the cells that hold exactly the run's
    /// saves (a change set of new objects), the inserts are listed at the end of the run, as the
    /// cells' key set: hashed when the change set was sealed, not here.
    private var insertsLater: CellRows?

    init(_ table: EntityTable, _ operations: [ChangeSet.Operation], run: Range<Int>, sequence: UInt64, isOwn: Bool,
         registersNew: Bool, policy: MergePolicy) {
        self.table = table
        self.operations = operations
        self.run = run
        self.sequence = sequence
        self.isOwn = isOwn
        self.registersNew = registersNew
        self.policy = policy
    }

    /// Merges the run, listing what changed in `changes`.
    mutating func merge(into changes: inout ContextChange.EntityChanges) throws {
        let saves = operations[run].count(where: \.isSave)
        let firstProvided = registersNew && saves > 0 ? table.saved.provideFreeSlots(saves) : nil
        if firstProvided != nil { table.records.grow(to: table.saved.slotCount) }
        if registersNew { changes.reserveInserts(saves) }
        insertsLater = registersNew && saves == run.count && changes.isEmpty ? Self.cellsOfEverySave(operations, run) : nil
        defer {
            takeNewRows()
            if let firstProvided { table.saved.dropFreeSlots(from: firstProvided) }
        }
        for index in claimLeadingNewRows()..<run.upperBound { try merge(at: index, into: &changes) }
        if let insertsLater { changes.inserted = insertsLater.keys! }
    }

    /// For a change set of new objects (an import's): claims its rows straight from the cells, in
    /// order, up to the first whose key is held already, and returns the index of the first
    /// operation left, merged one by one (``merge(at:into:)``). Each save is one row of the cells
    /// (``cellsOfEverySave(_:_:)``).
    private mutating func claimLeadingNewRows() -> Int {
        var first = run.lowerBound
        guard let cells = insertsLater, !table.hasEdits, table.deletions.isEmpty else { return first }
        newSlots.reserveCapacity(cells.count)
        newRows.reserveCapacity(cells.count)
        for row in 0..<cells.count {
            let found = table.saved.find(cells, row: row)
            guard found.slot == nil else { break }
            claimNewRow(found, of: cells, row: row)
            first += 1
        }
        return first
    }

    /// Merges operation `index` of the run.
    private mutating func merge(at index: Int, into changes: inout ContextChange.EntityChanges) throws {
        let table = self.table
        guard case .save(let save) = operations[index] else {
            listInsertsNow(before: index, into: &changes)
            takeNewRows()
            try table.merge(operations[index], sequence: sequence, isOwn: isOwn, registersNew: registersNew, policy: policy,
                            into: &changes)
            return
        }
        // A sealed save has its row, made by a context's table of the registered type or checked
        // for that type when the store sealed it (`Store.validate`).
        guard save.row != nil || type(of: save.object) == table.entityType else {
            throw StrataError(.unknownEntity, "entity name \(table.schema.name) is used by two types", entity: table.schema.name)
        }
        guard registersNew else {
            listInsertsNow(before: index, into: &changes)
            takeNewRows()
            try table.mergeRow(try save.row ?? table.encode(save.object), sequence: sequence, isOwn: isOwn,
                               registersNew: false, policy: policy, changes: &changes)
            return
        }
        let (cells, cellRow) = try cells(of: save, at: index)
        let found = table.saved.find(cells, row: cellRow)
        // The key as a value only where it is looked up or listed: an import's new row needs none.
        func key() throws -> DatabaseValue { table.key(of: try save.row ?? table.encode(save.object)) }
        if found.slot == nil, try table.edits.isEmpty || table.edits[key()] == nil,
           try table.deletions.isEmpty || table.deletions[key()] == nil {
            claimNewRow(found, of: cells, row: cellRow)
            if insertsLater !== cells {
                listInsertsNow(before: index, into: &changes)
                changes.insert(try key(), attributes: table.attributeNames)
            }
            return
        }
        listInsertsNow(before: index, into: &changes)
        takeNewRows()
        try table.mergeRow(try save.row ?? table.encode(save.object), found: found, sequence: sequence, isOwn: isOwn,
                           registersNew: registersNew, policy: policy, changes: &changes)
    }

    /// Lists the inserts left for the end of the run now, when an operation before `end` turns
    /// out not to be a new row of the cells.
    private mutating func listInsertsNow(before end: Int, into changes: inout ContextChange.EntityChanges) {
        guard insertsLater != nil else { return }
        insertsLater = nil
        // Sealed saves, each with its row (they carry cells).
        for case .save(let save) in operations[run.lowerBound..<end] {
            changes.insert(table.key(of: save.row!), attributes: table.attributeNames)
        }
    }

    /// Writes the new rows claimed so far and posts them to the indexes.
    private mutating func takeNewRows() {
        defer { batch = nil }
        guard let batch, !newSlots.isEmpty else { return }
        table.writeNewRows(batch.cells, rows: newRows, at: newSlots, base: batch.base, version: sequence)
        newSlots.removeAll(keepingCapacity: true)
        newRows.removeAll(keepingCapacity: true)
    }

    /// Adds row `row` of `cells`, whose key was just found absent, to the batch of new rows
    /// (written first: a batch of other cells), taking the cells' page at its first row.
    private mutating func claimNewRow(_ found: ColumnTable.KeyLookup, of cells: CellRows, row: Int) {
        if batch?.cells !== cells { takeNewRows() }
        let base = batch?.base ?? table.saved.arenaBase(for: cells)
        batch = (cells, base)
        let slot = table.saved.claimNew(found, cells: cells, row: row, base: base)
        table.records.claim(slot)
        newSlots.append(slot)
        newRows.append(row)
    }

    /// The cells holding `save` (operation `index`) and its row in them: the change set's, or
    /// cells made once for the saves from there on that carry none.
    private mutating func cells(of save: ChangeSet.Save, at index: Int) throws -> (CellRows, Int) {
        if let cells = save.cells { return (cells, save.cellRow) }
        if made == nil { made = try table.makeCells(operations, run: index..<run.upperBound) }
        return (made!.cells, made!.rows[index]!)
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
}
