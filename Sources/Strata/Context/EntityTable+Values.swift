import Foundation

/// Where an ``EntityTable`` meets the app's values: rows are encoded once, when an edit is made
/// or a change set sealed, and values are built (`init(row:)`) only when a caller reads them,
/// and kept while their saved copies are unchanged (the table's ``ValueCache``).
extension EntityTable {
    /// The row of `object`, by its row codec.
    func encode(_ object: any Entity) throws -> [DatabaseValue] {
        func open<E: Entity>(_ object: E) throws -> [DatabaseValue] { try encoder.encode(object) }
        return try open(object)
    }

    /// A value of the table's entity type built from `row`.
    func decode(_ row: [DatabaseValue]) throws -> any Entity {
        func open<E: Entity>(_ type: E.Type) throws -> any Entity { try rowDecoder.decode(E.self, from: row) }
        return try open(entityType)
    }

    /// The value an edit saves: the caller's, or the one a property-level merge produced.
    func editValue(_ edit: Edit) throws -> any Entity {
        if let value = edit.value { return value }
        return try decode(edit.row!)
    }

    /// What the context shows for `key`: its unsaved edit if any, else its saved copy (marked as
    /// read: an edit made from it is based on this version).
    func visible<E: Entity>(_ type: E.Type, _ key: DatabaseValue) throws -> E? {
        if let edit = edits[key] {
            guard let row = edit.row else { return nil }
            if let value = edit.value as? E { return value }
            return try rowDecoder.decode(E.self, from: row)
        }
        guard let slot = saved.slot(of: key) else { return nil }
        markRead(slot)
        return try savedValue(E.self, at: slot)
    }

    /// The value of the saved copy in `slot`: the one kept built from it, or built now and kept.
    private func savedValue<E: Entity>(_ type: E.Type, at slot: Int) throws -> E {
        // Every value this table keeps is a `KeptValue<E>` of its entity type, made here.
        precondition(entityType == E.self, "\(E.self) read from the table of \(entityType)")
        if let kept = values.value(at: slot, version: records.version(at: slot)) {
            return unsafeDowncast(kept, to: KeptValue<E>.self).value
        }
        let value = try cellDecoder.decode(E.self, from: saved.rowView(at: slot))
        if values.limit > 0 { values.keep(KeptValue(value), at: slot, version: records.version(at: slot), lastUses: records.lastUses) }
        return value
    }

    /// What the context shows for each key it shows, in order.
    func visible<E: Entity>(_ type: E.Type, keys: some Sequence<DatabaseValue>) throws -> [E] {
        var values: [E] = []
        for key in keys { if let value = try visible(E.self, key) { values.append(value) } }
        return values
    }

    /// The objects matching a query, evaluated in memory over what the context shows: saved
    /// copies decoded straight from their slots (never being edited: candidates leave those out),
    /// unsaved edits by key.
    func query<E: Entity>(_ type: E.Type, _ resolved: ResolvedQuery) throws -> [E] {
        let matches = try matches(resolved, ranking: true)
        let window = window(matches, resolved)
        var values: [E] = []
        values.reserveCapacity(window.count)
        for index in window {
            if index < matches.slots.count {
                let slot = matches.slots[index]
                markRead(slot)
                values.append(try savedValue(E.self, at: slot))
            } else if let value = try visible(E.self, matches.edited[index - matches.slots.count]) {
                values.append(value)
            }
        }
        return values
    }

    /// Records an insert of `value`.
    func insert<E: Entity>(_ value: E, policy: MergePolicy) throws {
        try insert(value, row: try encoder.encode(value), policy: policy)
    }

    /// Records an update of `value`.
    func update<E: Entity>(_ value: E, policy: MergePolicy) throws {
        try update(value, row: try encoder.encode(value), policy: policy)
    }
}
