import Foundation

/// Large change sets are merged off the main actor.
///
/// The main context copies its object graph — the copy's tables share their storage with the
/// context's until either side writes it — and the context's preparation queue merges the change
/// set into the copy: rows, in-memory indexes, conflicts with unsaved edits and the ``ContextChange`` to
/// publish. Meanwhile the main actor keeps serving reads from the graph as it was, logging which
/// saved copies it hands out, and change sets accepted after this one wait in the mailbox. When
/// the task is done, one short main-actor job adopts the copy's tables (the reads made meanwhile
/// replayed on them, so edits keep their bases), publishes the change, and merges what waited.
///
/// The copy is adopted only if nothing but reads changed the graph meanwhile: after an edit, a
/// save, a fetch registered or a policy change it would lose that change, so it is thrown away
/// and the merge prepared again from the graph as it is now — or, after
/// ``maximumPreparationAttempts``, or when the merge failed on the copy, done in place. A save
/// that has to see the change set at once (it writes an object the change set changed) merges
/// it in place and abandons the preparation (``mergeEverything()``).
extension MainContext {
    /// A change set being merged on a copy of the graph.
    struct Preparation {
        let id: UInt64
        let sequence: UInt64
        let changes: ChangeSet
        /// The graph's ``ObjectGraph/mutationStamp`` when it was copied.
        let stamp: UInt64
        let attempt: Int
    }

    /// How many times a merge is prepared again (the graph changed meanwhile) before it is done
    /// in place.
    static let maximumPreparationAttempts = 3

    /// Starts merging an accepted change set on a copy of the graph, off the main actor.
    func prepare(sequence: UInt64, changes: ChangeSet, attempt: Int) {
        preparationCount += 1
        let stamp = graph.mutationStamp
        let prepared = PreparedMerge(graph: graph.preparationCopy(), liveQueries: liveQueries)
        let preparation = Preparation(id: preparationCount, sequence: sequence, changes: changes, stamp: stamp,
                                      attempt: attempt)
        self.preparation = preparation
        mailbox.withLock { $0.preparing = [.accepted(sequence, changes)] }
        // The main-actor job captures the preparation's ID, not its change set, which it would
        // free on the main actor if it held the last reference (freeing a large one is not free).
        let id = preparation.id
        preparationQueue.async { [weak self] in
            prepared.run(sequence: sequence, changes: changes)
            Task { @MainActor in self?.finishPreparation(id, prepared) }
        }
    }

    /// Adopts a prepared merge (or prepares it again, or merges it in place), publishes it, and
    /// merges what waited behind it. One main-actor job.
    func finishPreparation(_ id: UInt64, _ prepared: PreparedMerge) {
        // Abandoned (merged in place since) when it is no longer the current one.
        guard let preparation, preparation.id == id else { return }
        self.preparation = nil
        mailbox.withLock { $0.preparing = [] }
        timed {
            switch prepared.outcome {
            case .success(let change)? where graph.mutationStamp == preparation.stamp:
                ReplacedTables.release(graph.adopt(prepared.graph))
                if let change, !change.isEmpty { publish(change, changedKeys: prepared.changedKeys, windows: prepared.windows) }
            case .success? where preparation.attempt < Self.maximumPreparationAttempts:
                graph.logReads(false)
                prepare(sequence: preparation.sequence, changes: preparation.changes, attempt: preparation.attempt + 1)
                return 0
            default:
                // The graph kept changing, or the merge failed on the copy: merged here, a
                // failure reported as any merge's is.
                graph.logReads(false)
                mergeInPlace(sequence: preparation.sequence, changes: preparation.changes)
            }
            return 1 + mergeMailbox(inPlace: false)
        }
    }

    /// Stops waiting for the current preparation: its change set goes back to the front of the
    /// mailbox (to be merged in place by the caller), its outcome will be ignored.
    func abandonPreparation() {
        guard preparation != nil else { return }
        preparation = nil
        graph.logReads(false)
        mailbox.withLock { box in
            box.items.insert(contentsOf: box.preparing, at: 0)
            box.preparing = []
        }
    }
}
