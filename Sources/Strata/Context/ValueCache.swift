/// Values a table's rows were built into, by slot, kept so that reading a row again costs a
/// lookup instead of running the entity's `init(row:)` (a string per text cell, a URL parsed):
/// the bounded value cache of a context, kept by ``EntityTable`` beside its ``ColumnTable``.
///
/// Each value is kept with the version of the row it was built from, and is handed out only
/// while the slot still holds that version. The engine forgets a slot's value whenever it writes
/// the slot's cells (even at the same version) or frees it, and a copy that replaces the table
/// takes its values only after writing each row it changed at a newer version than any of them
/// (``EntityTable/replayReads(of:)``), so a value is never older than its row. Beyond ``limit``
/// values, the half least recently used (by the table's last uses, ``SlotRecords``) is dropped
/// at once: amortized, a kept value costs O(log n). A limit of 0 keeps nothing.
///
/// Not thread-safe: part of a table, owned by one context's isolation.
struct ValueCache {
    struct Entry {
        /// The version of the row the value was built from.
        let version: UInt64
        /// The value, in a ``KeptValue`` of the table's entity type.
        let box: AnyObject
    }

    /// How many values are kept at most.
    let limit: Int
    private var entries: [Int: Entry] = [:]

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// How many values are kept.
    var count: Int { entries.count }

    /// The value kept for `slot` (in its ``KeptValue``), if it was built from `version`.
    func value(at slot: Int, version: UInt64) -> AnyObject? {
        guard let entry = entries[slot], entry.version == version else { return nil }
        return entry.box
    }

    /// Keeps `value`, built from the row in `slot` at `version`; when the cache is full, first
    /// drops the least recently used half (`lastUses`: the table's per-slot clock).
    mutating func keep(_ value: AnyObject, at slot: Int, version: UInt64, lastUses: PagedArray<UInt64>) {
        guard limit > 0 else { return }
        if entries.count >= limit, entries[slot] == nil { trim(toKeep: limit / 2, lastUses: lastUses) }
        entries[slot] = Entry(version: version, box: value)
    }

    /// Forgets the value kept for `slot` (its row is being written or removed).
    mutating func forget(_ slot: Int) {
        if !entries.isEmpty { entries.removeValue(forKey: slot) }
    }

    mutating func removeAll() {
        entries = [:]
    }

    /// Keeps the `keep` most recently used values.
    private mutating func trim(toKeep keep: Int, lastUses: PagedArray<UInt64>) {
        let newest = entries.keys.sorted { lastUses[$0] > lastUses[$1] }
        for slot in newest.dropFirst(keep) { entries.removeValue(forKey: slot) }
    }
}

/// A value kept in a ``ValueCache``: one class instance, so that a reader that knows the table's
/// entity type takes the value out without a dynamic cast of an existential (which copies it
/// twice).
final class KeptValue<E: Entity>: Sendable {
    let value: E

    init(_ value: E) {
        self.value = value
    }
}
