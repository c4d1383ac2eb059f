extension Store {
    /// The value stored under `key` by a committed change set (``ChangeSet/setStoredValue(_:forKey:)``),
    /// or nil when none is. A change set still pending is not seen: wait for its
    /// ``Submission/committed()`` first.
    ///
    /// ```swift
    /// let cursor = try await store.storedValue(forKey: "feed.cursor").flatMap(String.fromDatabaseValue) ?? "0"
    /// ```
    ///
    /// One `SELECT` of the bookkeeping table `strata_values` on the store's queue.
    /// - Throws: `.closed` after ``close()``.
    public func storedValue(forKey key: String) async throws -> DatabaseValue? {
        try await onQueue { writer in try StoredValues.value(forKey: key, writer.connection) }
    }

    /// Every committed stored value whose key starts with `prefix`, by key.
    ///
    /// ```swift
    /// for (key, value) in try await store.storedValues(withPrefix: "feed.") { print(key, value) }
    /// ```
    /// - Throws: `.closed` after ``close()``.
    public func storedValues(withPrefix prefix: String) async throws -> [String: DatabaseValue] {
        try await onQueue { writer in try StoredValues.values(withPrefix: prefix, writer.connection) }
    }
}
