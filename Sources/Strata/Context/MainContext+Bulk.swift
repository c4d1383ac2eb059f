import Foundation

/// Bulk operations from the main context: one statement at the root each, and the context patched
/// (off the main actor when large) before the call returns.
extension MainContext {
    /// Sets attributes of every object whose ID is in `ids`, in one statement at the root, and
    /// patches this context, its live queries and observers as if each object had been saved.
    ///
    /// Returns once the context shows the change (the root commits in the background, as after
    /// ``save()``). A patch of many objects is prepared off the main actor and applied in one
    /// short main-actor job, so the call suspends rather than holding the main actor; other
    /// main-actor work runs meanwhile and sees the context as it was before the call.
    @discardableResult
    public func updateAll<E: Entity, C: Collection>(
        _ type: E.Type, ids: C, set values: [String: any DatabaseValueConvertible]
    ) async throws -> Submission where C.Element == E.ID {
        let submission = try store.updateAll(type, ids: ids, set: values)
        await waitUntilMerged(through: submission.sequence)
        return submission
    }

    /// Sets attributes of every object matching `filter`, in one statement at the root, and
    /// patches this context like ``updateAll(_:ids:set:)``: returns once the context shows it.
    @discardableResult
    public func updateAll<E: Entity>(
        _ type: E.Type, where filter: Filter, set values: [String: any DatabaseValueConvertible]
    ) async throws -> Submission {
        let submission = try store.updateAll(type, where: filter, set: values)
        await waitUntilMerged(through: submission.sequence)
        return submission
    }

    /// Deletes every object whose ID is in `ids`, in one statement at the root, and patches this
    /// context, its live queries and observers as if each object had been deleted and saved:
    /// returns once the context shows it, like ``updateAll(_:ids:set:)``. IDs the store does not
    /// have are skipped.
    @discardableResult
    public func deleteAll<E: Entity, C: Collection>(_ type: E.Type, ids: C) async throws -> Submission where C.Element == E.ID {
        let submission = try store.deleteAll(type, ids: ids)
        await waitUntilMerged(through: submission.sequence)
        return submission
    }

    /// Deletes every object matching `filter`, in one statement at the root, and patches this
    /// context like ``deleteAll(_:ids:)``: returns once the context shows it.
    @discardableResult
    public func deleteAll<E: Entity>(_ type: E.Type, where filter: Filter) async throws -> Submission {
        let submission = try store.deleteAll(type, where: filter)
        await waitUntilMerged(through: submission.sequence)
        return submission
    }
}
