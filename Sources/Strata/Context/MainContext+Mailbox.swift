import Foundation

/// Merging what the store accepted, in order, on the main actor: small change sets in place, a
/// few at a time, a large one handed to a merge prepared off the main actor
/// (`MainContext+PreparedMerge`).
extension MainContext {
    /// Merges the mailbox's change sets (see ``mergePending()``); returns how many it took.
    ///
    /// Unless `inPlace` (everything now), one job merges in place change sets reaching together
    /// at most ``preparedMergeThreshold`` objects, the size of the largest one merged in place
    /// (a first one always): several workers' small change sets waiting together would otherwise
    /// hold the main actor for all of them. What is left waits, in order, for the next job, and
    /// the main actor serves other work in between.
    @discardableResult
    func mergeMailbox(inPlace: Bool) -> Int {
        let items = mailbox.withLock { box -> [StoreEvent] in
            box.isScheduled = false
            defer { box.items.removeAll() }
            return box.items
        }
        var budget = preparedMergeThreshold
        for (index, item) in items.enumerated() {
            guard case .accepted(let sequence, let changes) = item else {
                if case .failed(_, let changes, let conflicts) = item {
                    do {
                        try graph.restoreEdits(of: changes, conflicts: conflicts)
                    } catch {
                        report(error, while: "giving back the edits of a save that conflicted with an outside change")
                    }
                    reloadAfterFailure(changes)
                }
                continue
            }
            if !inPlace, sequence > graph.mergedSequence, changes.author != graph.identity {
                let reach = changes.reach(upTo: preparedMergeThreshold)
                if reach >= preparedMergeThreshold {
                    // Those after it wait, in order, for the prepared merge.
                    mailbox.withLock { $0.items.insert(contentsOf: items[(index + 1)...], at: 0) }
                    prepare(sequence: sequence, changes: changes, attempt: 1)
                    return index + 1
                }
                if reach > budget {
                    requeue(items[index...])
                    return finishMerging(index)
                }
                budget -= reach
            }
            mergeInPlace(sequence: sequence, changes: changes)
        }
        return finishMerging(items.count)
    }

    /// Puts `items` back at the front of the mailbox, for a main-actor job of their own.
    func requeue(_ items: ArraySlice<StoreEvent>) {
        let schedule = mailbox.withLock { box -> Bool in
            box.items.insert(contentsOf: items, at: 0)
            defer { box.isScheduled = true }
            return !box.isScheduled
        }
        if schedule {
            Task { @MainActor in self.mergePending() }
        }
    }

    /// After merging `count` of the mailbox's events: evicts what the limit asks and wakes who
    /// waited for what was merged; returns `count`.
    func finishMerging(_ count: Int) -> Int {
        evictIfNeeded()
        resumeMergeWaiters()
        return count
    }

    /// Merges one accepted change set into the tables on the main actor and publishes it.
    func mergeInPlace(sequence: UInt64, changes: ChangeSet) {
        do {
            if let change = try graph.merge(sequence: sequence, changes: changes), !change.isEmpty {
                publish(change)
            }
        } catch {
            report(error, while: "merging change set \(sequence)")
        }
    }
}
