import Foundation

/// Identifies a context (main or worker) as the author of change sets.
struct ContextIdentity: Sendable, Hashable {
    let id: UUID
    let name: String
}

/// What the store tells contexts, in order: a change set was accepted (merge it now), or an
/// accepted change set failed for good at commit (re-read what it touched).
enum StoreEvent: Sendable {
    case accepted(UInt64, ChangeSet)
    /// A change set that failed for good after contexts merged it; `conflicts` lists, by entity,
    /// the objects it wrote that were changed from outside since its context read them, when
    /// that is why (``MergePolicy/reportConflict``): its context gets those edits back.
    case failed(UInt64, ChangeSet, conflicts: [String: [DatabaseValue]])
}

extension Store {
    /// Registers `observer` to be called, in acceptance order, with every change set the store
    /// accepts, together with the sequence the store is at when the observer is added (every
    /// later change set has a higher sequence). Called while the pipeline lock is held: it must
    /// only enqueue.
    func addAcceptObserver(_ observer: @escaping @Sendable (StoreEvent) -> Void) -> (UUID, UInt64) {
        let id = UUID()
        let sequence = pipeline.withLock { state -> UInt64 in
            state.acceptObservers[id] = observer
            return state.nextSequence - 1
        }
        return (id, sequence)
    }

    func removeAcceptObserver(_ id: UUID) {
        _ = pipeline.withLock { $0.acceptObservers.removeValue(forKey: id) }
    }

    /// The sequence of the last accepted change set.
    var acceptedSequence: UInt64 { pipeline.withLock { $0.nextSequence - 1 } }

    /// Whether a transaction is being written right now (for tests that prove reads don't wait).
    var isPersisting: Bool { pipeline.withLock { $0.isDraining } }

    /// Fetches on the queue, as a checked block of cells (``fetchBlock(_:_:pending:)``), and
    /// reports the sequence the result reflects: every change set up to it (committed or
    /// pending) is included, none after it.
    func fetchSnapshot<E: Entity>(_ query: Query<E>) async throws -> (block: ColumnBlock, sequence: UInt64) {
        let resolved = try ResolvedQuery(query, schema: registry.schema(for: E.self))
        return try await interruptibleOnQueue(prepare: { self.takeInOutsideCommits($0) }) { writer in
            let (pending, sequence) = self.pipeline.withLock { ($0.pending, $0.nextSequence - 1) }
            return (try self.fetchBlock(resolved, writer, pending: pending), sequence)
        }
    }
}
