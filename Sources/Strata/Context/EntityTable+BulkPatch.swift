import Foundation

/// Bulk updates and deletions merged without rows: the objects they reach, and cells patched
/// in place with the indexes moved once.
extension EntityTable {
    /// The slots and keys of the held objects a bulk operation reaches, each once.
    func targets(_ target: ChangeSet.BulkTarget) throws -> [(slot: Int, key: DatabaseValue)] {
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
    struct BulkPatch {
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
    func patch(_ slot: Int, key: DatabaseValue, _ patch: inout BulkPatch, sequence: UInt64,
                       changes: inout ContextChange.EntityChanges) {
        guard records.version(at: slot) <= sequence else { return }
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
            values.forget(slot)
            if patch.changed.contains(where: { patch.sorts[$0] }) { ordered?.touch(slot) }
            if let oldText { fullText?.replace(slot, old: oldText, new: saved.rowView(at: slot)) }
        }
        records.setVersion(sequence, at: slot)
        clock += 1
        records.setLastUse(clock, at: slot)
        let names = patch.changed.count == patch.assignments.count
            ? patch.names : Set(patch.changed.map { schema.attributes[patch.assignments[$0].position].name })
        changes.update(key, keys: names)
    }
}
