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
    ///
    /// `author` is the history's ``HistoryTransaction/author`` for it — `"sync"` for what a sync
    /// engine applies — as for ``Store/updateAll(_:ids:set:author:)``; without one, the main
    /// context's name, `"main"`, as for ``save()``.
    @discardableResult
    public func updateAll<E: Entity, C: Collection>(
        _ type: E.Type, ids: C, set values: [String: any DatabaseValueConvertible], author: String? = nil
    ) async throws -> Submission where C.Element == E.ID {
        let submission = try store.updateAll(type, ids: ids, set: values, author: author ?? graph.identity.name)
        await waitUntilMerged(through: submission.sequence)
        return submission
    }

    /// Sets attributes of every object matching `filter`, in one statement at the root, and
    /// patches this context like ``updateAll(_:ids:set:author:)``: returns once the context shows
    /// it. `author` as for ``updateAll(_:ids:set:author:)``.
    @discardableResult
    public func updateAll<E: Entity>(
        _ type: E.Type, where filter: Filter, set values: [String: any DatabaseValueConvertible], author: String? = nil
    ) async throws -> Submission {
        let submission = try store.updateAll(type, where: filter, set: values, author: author ?? graph.identity.name)
        await waitUntilMerged(through: submission.sequence)
        return submission
    }

    /// Deletes every object whose ID is in `ids`, in one statement at the root, and patches this
    /// context, its live queries and observers as if each object had been deleted and saved:
    /// returns once the context shows it, like ``updateAll(_:ids:set:author:)``. IDs the store
    /// does not have are skipped. `author` as for ``updateAll(_:ids:set:author:)``.
    @discardableResult
    public func deleteAll<E: Entity, C: Collection>(_ type: E.Type, ids: C, author: String? = nil) async throws -> Submission
    where C.Element == E.ID {
        let submission = try store.deleteAll(type, ids: ids, author: author ?? graph.identity.name)
        await waitUntilMerged(through: submission.sequence)
        return submission
    }

    /// Deletes every object matching `filter`, in one statement at the root, and patches this
    /// context like ``deleteAll(_:ids:author:)``: returns once the context shows it. `author` as
    /// for ``updateAll(_:ids:set:author:)``.
    @discardableResult
    public func deleteAll<E: Entity>(_ type: E.Type, where filter: Filter, author: String? = nil) async throws -> Submission {
        let submission = try store.deleteAll(type, where: filter, author: author ?? graph.identity.name)
        await waitUntilMerged(through: submission.sequence)
        return submission
    }
}
