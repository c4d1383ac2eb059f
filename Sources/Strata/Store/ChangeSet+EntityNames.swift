extension ChangeSet {
    /// Sets `values` on every object of the entity named `entity` whose primary key is in `ids`,
    /// in one statement, without loading them; IDs the store does not hold are skipped. The
    /// by-name form of ``updateAll(_:ids:set:)``, for a sync that applies a server's changes
    /// knowing entities by name.
    ///
    /// ```swift
    /// changes.updateAll(entity: "Article", ids: [.integer(7), .integer(9)], set: ["isRead": .integer(1)])
    /// ```
    /// The store checks the entity, the attributes and the values when the change set is
    /// submitted (``Store/submit(_:)``), refusing all of it with an error naming them.
    @_spi(Sync)
    public mutating func updateAll(entity: String, ids: [DatabaseValue], set values: [String: DatabaseValue]) {
        append(.bulkUpdate(entity: entity, target: .ids(ids), assignments: Self.assignments(values)))
    }

    /// Deletes every object of the entity named `entity` whose primary key is in `ids`, in one
    /// statement; IDs the store does not hold are skipped. The by-name form of
    /// ``deleteAll(_:ids:)``.
    ///
    /// ```swift
    /// changes.deleteAll(entity: "Article", ids: [.integer(7)])
    /// ```
    @_spi(Sync)
    public mutating func deleteAll(entity: String, ids: [DatabaseValue]) {
        append(.bulkDelete(entity: entity, target: .ids(ids)))
    }
}
