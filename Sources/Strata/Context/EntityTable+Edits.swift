import Foundation

/// Unsaved edits: what the caller changed, the copy each change was based on, and how a
/// conflict with a newer copy is resolved by the merge policy.
extension EntityTable {
    /// The version and row an edit of `key` is based on: what the caller last read.
    private func readBase(_ key: DatabaseValue) -> (version: UInt64, row: [DatabaseValue])? {
        guard let slot = saved.slot(of: key) else { return nil }
        let read = records.readVersion(at: slot), version = records.version(at: slot)
        if read > 0, read < version { return (read, staleReads[key] ?? saved.row(at: slot)) }
        return (version, saved.row(at: slot))
    }

    /// An edit made on a copy older than the one held since: a conflict with that newer copy.
    func resolveStaleRead(_ edit: inout Edit, key: DatabaseValue, policy: MergePolicy) throws {
        guard let slot = saved.slot(of: key), edit.baseVersion < records.version(at: slot) else { return }
        try resolve(&edit, remote: saved.row(at: slot), sequence: records.version(at: slot), policy: policy)
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


    func resolve(_ edit: inout Edit, remote: [DatabaseValue], sequence: UInt64, policy: MergePolicy) throws {
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
            let stored = saved.slot(of: key).map { (version: records.version(at: $0), row: saved.row(at: $0)) }
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
}
