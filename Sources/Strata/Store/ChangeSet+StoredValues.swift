/// A write of one stored value that a change set carries (``ChangeSet/setStoredValue(_:forKey:)``).
struct StoredValueWrite: Sendable {
    let key: String
    /// The new value; nil removes the key.
    let value: DatabaseValue?
}

extension ChangeSet {
    /// Stores `value` under `key` in the store file, in the same transaction as this change set's
    /// objects: both are committed, or neither (a change set that fails leaves the key as it was).
    /// A sync records its cursor beside the changes it pulled this way; an app can keep its own
    /// bookmarks. Read it back with ``Store/storedValue(forKey:)``.
    ///
    /// ```swift
    /// var changes = ChangeSet()
    /// changes.transactionAuthor = "sync"
    /// changes.upsert(articleFromServer)
    /// changes.setStoredValue(.text(page.cursor), forKey: "feed.cursor")
    /// try await store.submit(changes).committed()
    /// ```
    ///
    /// Values live in the bookkeeping table `strata_values` (`INSERT … ON CONFLICT(key) DO
    /// UPDATE`), written after the change set's operations inside its savepoint. They are not
    /// objects: the history does not record them and contexts never see them. Later writes of one
    /// key in the change set win.
    /// - Parameters:
    ///   - value: The value; `.null` is stored as `.null` (use ``removeStoredValue(forKey:)`` to remove).
    ///   - key: Any string; keys starting with `strata.` are reserved for Strata's own modules.
    public mutating func setStoredValue(_ value: DatabaseValue, forKey key: String) {
        storedValueWrites.append(StoredValueWrite(key: key, value: value))
    }

    /// Removes the value stored under `key` in the same transaction as this change set's objects
    /// (nothing happens for a key that holds none).
    public mutating func removeStoredValue(forKey key: String) {
        storedValueWrites.append(StoredValueWrite(key: key, value: nil))
    }
}
