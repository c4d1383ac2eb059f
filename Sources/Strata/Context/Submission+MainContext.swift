extension Submission {
    /// Returns once the store's main context has merged this change set — its objects are in
    /// the context's reads and its ``ContextChange`` (if it changed anything there) was published.
    /// Returns at once when there is no main context, or it had merged it already (its own
    /// saves are merged when they are made). Never hangs, even for a change set that changes
    /// nothing the context shows. A change set that later fails to commit is merged all the same
    /// (and then corrected, see ``MainContext/failures()`` and ``Store/failures()``).
    @MainActor
    public func mergedIntoMainContext() async {
        guard let main = store.mainContextSlot.withLock({ $0.object }) as? MainContext else { return }
        await main.waitUntilMerged(through: sequence)
    }
}
