import Foundation

/// Merging change sets into the saved copies: runs of one entity's operations, new rows written
/// in batches, rows merged one by one against unsaved edits, deletions, and reloaded rows.
extension EntityTable {
    /// Merges `run`, a run of this entity's operations in `operations`, in order (``RunMerge``).
    func merge(_ operations: [ChangeSet.Operation], run: Range<Int>, sequence: UInt64, isOwn: Bool, registersNew: Bool,
               policy: MergePolicy, into changes: inout ContextChange.EntityChanges) throws {
        var merge = RunMerge(self, operations, run: run, sequence: sequence, isOwn: isOwn, registersNew: registersNew,
                             policy: policy)
        try merge.merge(into: &changes)
    }

    /// Writes new rows `rows` of `cells` into the slots they claimed (``ColumnTable/claimNew(_:cells:row:base:)``),
    /// their bytes at `base`, as of `version`, and posts them to the indexes: one index map change
    /// per distinct key (``InMemoryIndex/insertNew(_:of:)``). Each new row's last use is a tick of
    /// the clock, in the order they were claimed.
    func writeNewRows(_ cells: CellRows, rows: [Int], at slots: [Int], base: UInt64, version: UInt64) {
        mutationCount &+= 1
        saved.writeNew(cells, rows: rows, at: slots, base: base)
        records.wroteNew(at: slots, version: version, firstUse: clock + 1)
        clock += UInt64(slots.count)
        touchNew(slots, rows: rows, of: cells)
        if indexesEnabled { for index in indexes.indices { indexes[index].insertNew(slots, of: saved) } }
        if fullText != nil { for slot in slots { fullText!.insert(slot, row: saved.rowView(at: slot)) } }
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

    /// The cells of the saves in `run` of `operations` that carry none, and each one's row in them.
    func makeCells(_ operations: [ChangeSet.Operation], run: Range<Int>) throws -> (CellRows, [Int: Int]) {
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

    func merge(_ operation: ChangeSet.Operation, sequence: UInt64, isOwn: Bool, registersNew: Bool,
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

    /// Merges a saved copy's row (`found`: where its key is, when the caller looked already).
    func mergeRow(_ row: [DatabaseValue], found: ColumnTable.KeyLookup? = nil, sequence: UInt64, isOwn: Bool,
                          registersNew: Bool, policy: MergePolicy, changes: inout ContextChange.EntityChanges) throws {
        let key = key(of: row)
        let found = found ?? saved.find(key)
        let slot = found.slot
        // Strictly newer copies win; operations of the same change set all apply, in order. A
        // copy read before a deletion merged since (catch-up, corrections) stays deleted.
        if let slot, records.version(at: slot) > sequence { return }
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
        if let slot, records.version(at: slot) > sequence { return }
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
}
