import Foundation
import Observation

/// How a live query's result changed: a `CollectionDifference` of IDs that turns the previous
/// result into the new one (moves are removal/insertion pairs associated with each other), and
/// the IDs whose values changed (present before and after).
public struct LiveQueryDiff<ID: Hashable & Sendable>: Sendable {
    /// The insertions and removals that turn the previous result into the new one.
    public let difference: CollectionDifference<ID>
    /// The IDs that were in the result before and after, with changed values.
    public let updated: Set<ID>
    /// The store sequence of the change that caused it.
    public let sequence: UInt64
}

@MainActor
protocol LiveQueryUpdating: AnyObject {
    /// The name of the entity the query is over.
    var entityName: String { get }
    /// Brings the result up to date with `change`, whose objects of the query's entity are
    /// `changed` (``ContextChange/EntityChanges/objectKeys``: made once per change, for every live
    /// query of the entity, and off the main actor when the merge was).
    func apply(_ change: ContextChange, changed: Set<DatabaseValue>, in context: MainContext)
    var heldKeys: [DatabaseValue] { get }
    /// Re-runs the query over the context (after a fetch filled the entity's table whole).
    func refresh(in context: MainContext)
}

/// A query result kept current from the change sets merged into the main context, like
/// `NSFetchedResultsController`: ``values`` always equals re-running the query in memory, and
/// ``diffs()`` streams how each change moved it. It is `@Observable`, so SwiftUI views that read
/// ``values`` update by themselves.
///
/// ```swift
/// let unread = try main.observe(Query<Article>(where: Attribute("isRead") == false,
///                                              sortedBy: [Attribute("published").descending], limit: 50))
/// for await diff in unread.diffs() { tableView.apply(diff.difference) }
/// ```
/// Maintenance is incremental — no SQL when the entity is resident. For other entities the
/// query is fetched from the root once (and again after bulk operations, whose objects the
/// context may not hold), then kept current from merges.
@MainActor
@Observable
public final class LiveQuery<E: Entity>: LiveQueryUpdating {
    /// The current result, in the query's order and window.
    public private(set) var values: [E] = []
    /// The IDs of ``values``.
    public private(set) var ids: [E.ID] = []

    /// Why the result stopped following the store, if it did: an update or a fetch failed (the
    /// error is also sent to ``MainContext/failures()``). Cleared by the next successful update.
    public private(set) var error: StrataError?

    /// The query this result follows.
    public let query: Query<E>
    @ObservationIgnored private let resolved: ResolvedQuery
    @ObservationIgnored private weak var context: MainContext?
    /// Every match in order, without the window: the values it is ordered by (the sort
    /// attributes, then the key), flat. Not whole rows: recomputing a result of 70,000 matches
    /// would copy every text value out of the table. Keyed by the stored key, not the app's ID
    /// type: code generic over the app's type is not specialized in this module, and every copy
    /// would go through its value witnesses; IDs are made for the window only.
    @ObservationIgnored private var entries: SortedMatches
    /// Each match's sort values by key, for placing a few changes one by one; built when first
    /// needed after a recompute or a merge, then kept up to date by those placements.
    @ObservationIgnored private var members: [DatabaseValue: [DatabaseValue]]?
    /// The stored keys of ``ids``. A merge diffs the window by these and makes IDs only for what
    /// changed: code generic over the app's ID type is not specialized in this module, and a
    /// merge's diff runs over the whole window, on the main actor.
    @ObservationIgnored private var keys: [DatabaseValue] = []
    /// The rows of the objects in the window, by key: what tells an updated object from one a
    /// change named but left as it was.
    @ObservationIgnored private var windowRows: [DatabaseValue: [DatabaseValue]] = [:]
    @ObservationIgnored private var streams: [UUID: AsyncStream<LiveQueryDiff<E.ID>>.Continuation] = [:]
    @ObservationIgnored private var valueStreams: [UUID: AsyncThrowingStream<[E], Error>.Continuation] = [:]
    @ObservationIgnored private let key = UUID()

    init(query: Query<E>, context: MainContext) throws {
        self.query = query
        self.context = context
        self.resolved = try ResolvedQuery(query, schema: context.store.registry.schema(for: E.self))
        self.entries = SortedMatches(width: resolved.sort.count + 1)
        try recompute(sequence: context.graph.mergedSequence, publish: false)
        context.liveQueries[key] = self
        if E.residency != .resident { refetch() }
    }

    /// A stream of diffs, one per change that altered the result.
    public func diffs() -> AsyncStream<LiveQueryDiff<E.ID>> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<LiveQueryDiff<E.ID>>.makeStream()
        // Weak: the continuation is stored in `streams`; a strong capture would be a cycle.
        continuation.onTermination = { [weak self] _ in Task { @MainActor in self?.streams[id] = nil } }
        streams[id] = continuation
        return stream
    }

    /// The result as an asynchronous sequence: the current ``values`` at once, then the new ones
    /// after every change that alters them. It ends when the query is cancelled, and throws the
    /// failure (``error``) if the result can no longer be kept current.
    ///
    /// ```swift
    /// for try await articles in unread.results() { render(articles) }
    /// ```
    public func results() -> AsyncThrowingStream<[E], Error> {
        let id = UUID()
        let (stream, continuation) = AsyncThrowingStream<[E], Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in Task { @MainActor in self?.valueStreams[id] = nil } }
        if let error {
            continuation.finish(throwing: error)
            return stream
        }
        continuation.yield(values)
        valueStreams[id] = continuation
        return stream
    }

    /// Stops updating.
    public func cancel() {
        context?.liveQueries[key] = nil
        for stream in streams.values { stream.finish() }
        streams.removeAll()
        for stream in valueStreams.values { stream.finish() }
        valueStreams.removeAll()
    }

    /// The result cannot be kept current: say so through ``error``, the value sequences and the
    /// context's failures.
    private func fail(_ error: Error, in context: MainContext) {
        let failure = Store.strataError(error, path: context.store.path)
        self.error = failure
        for stream in valueStreams.values { stream.finish(throwing: failure) }
        valueStreams.removeAll()
        context.report(failure, while: "keeping a live query of \(E.entityName) current")
    }

    var heldKeys: [DatabaseValue] { keys }

    nonisolated var entityName: String { E.entityName }

    func apply(_ change: ContextChange, changed: Set<DatabaseValue>, in context: MainContext) {
        guard !changed.isEmpty else { return }
        do {
            // Re-running the query costs a filter over every candidate and a sort; placing the
            // changes costs a pass over the entries and a sort of the changes.
            if changed.count > max(64, entries.count) {
                try recompute(sequence: change.sequence, publish: true, updated: changed)
            } else {
                try update(changed, sequence: change.sequence)
            }
        } catch {
            fail(error, in: context)
        }
        if E.residency != .resident, change.origin == .bulkOperation { refetch() }
    }

    func refresh(in context: MainContext) {
        do {
            try recompute(sequence: context.graph.mergedSequence, publish: true)
        } catch {
            fail(error, in: context)
        }
    }

    private func table() throws -> EntityTable {
        guard let context else { throw StrataError(.closed, "the main context is gone") }
        return try context.graph.table(E.self)
    }

    private func refetch() {
        var fetchQuery = query
        if let limit = query.limit, limit >= 0 {
            fetchQuery.limit = limit.addingReportingOverflow(max(0, query.offset)).overflow ? nil : limit + max(0, query.offset)
        }
        fetchQuery.offset = 0
        Task { [weak self] in
            guard let context = self?.context else { return }
            do {
                _ = try await context.fetch(fetchQuery)
                try self?.recompute(sequence: context.graph.mergedSequence, publish: true)
            } catch {
                self?.fail(error, in: context)
            }
        }
    }

    /// Re-runs the query over the context and diffs the result against the previous one.
    private func recompute(sequence: UInt64, publish: Bool, updated: Set<DatabaseValue> = []) throws {
        let table = try table()
        entries = try table.sortedMatches(resolved)
        members = nil
        publishWindow(candidates: updated, table, sequence: sequence, publish: publish)
    }

    /// Applies changed IDs without re-running the query: a few by binary search, more in one pass
    /// (see ``merge(_:)``).
    private func update(_ changed: Set<DatabaseValue>, sequence: UInt64) throws {
        let table = try table()
        if changed.count <= Self.changesPlacedOneByOne {
            var members = self.members ?? Dictionary(uniqueKeysWithValues: (0..<entries.count).map {
                (entries.key(at: $0), Array(entries.sortValues(at: $0)))
            })
            for key in changed {
                if let old = members.removeValue(forKey: key) { entries.remove(at: position(of: old, key)) }
                if let sort = sortValues(key, table) {
                    entries.insert(sort, at: entries.insertionIndex(sort, resolved))
                    members[key] = sort
                }
            }
            self.members = members
        } else {
            merge(changed, table)
        }
        publishWindow(candidates: changed, table, sequence: sequence, publish: true)
    }

    /// Diffs the window of ``entries`` against the one shown, by key, and publishes it when it
    /// changed (or when `publish` is false: the first result).
    private func publishWindow(candidates: Set<DatabaseValue>, _ table: EntityTable, sequence: UInt64, publish: Bool) {
        let newKeys = resolved.window(Array(0..<entries.count)).map { entries.key(at: $0) }
        let difference = OrderedDifference.make(from: keys, to: newKeys)
        let updated = updatedRows(newKeys, candidates: candidates, table)
        guard let context else { return }
        if error != nil { error = nil }
        guard !difference.isEmpty || !updated.isEmpty || !publish else { return }
        keys = newKeys
        ids = newKeys.map(Self.id)
        do {
            values = try context.graph.table(E.self).visible(E.self, keys: newKeys)
        } catch {
            fail(error, in: context)
        }
        guard publish else { return }
        let diff = LiveQueryDiff(difference: Self.ids(of: difference), updated: Set(updated.map(Self.id)), sequence: sequence)
        for stream in streams.values { stream.yield(diff) }
        for stream in valueStreams.values { stream.yield(values) }
    }

    /// The kept keys among `candidates` whose row changed, and the window's rows from now on
    /// (rows are read again only for the candidates and the keys new to the window; the others'
    /// rows did not change).
    private func updatedRows(_ newKeys: [DatabaseValue], candidates: Set<DatabaseValue>, _ table: EntityTable) -> [DatabaseValue] {
        var rows: [DatabaseValue: [DatabaseValue]] = [:]
        rows.reserveCapacity(newKeys.count)
        var updated: [DatabaseValue] = []
        for key in newKeys {
            let isCandidate = candidates.contains(key)
            let old = windowRows[key]
            let row = isCandidate || old == nil ? table.visibleRow(key) : old
            rows[key] = row
            if let old, isCandidate, row != old { updated.append(key) }
        }
        windowRows = rows
        return updated
    }

    /// A difference of keys as one of IDs (the changes only: few, where the window is many).
    private static func ids(of difference: CollectionDifference<DatabaseValue>) -> CollectionDifference<E.ID> {
        CollectionDifference(difference.map { change -> CollectionDifference<E.ID>.Change in
            switch change {
            case .insert(let offset, let key, let other): return .insert(offset: offset, element: id(key), associatedWith: other)
            case .remove(let offset, let key, let other): return .remove(offset: offset, element: id(key), associatedWith: other)
            }
        })!
    }

    /// Up to how many changed IDs are placed one by one (each a binary search and an array
    /// insertion that moves the entries after it); more are merged in one pass.
    static var changesPlacedOneByOne: Int { 16 }

    /// The values `key`'s object is ordered by, if the context shows it and it matches the filter.
    private func sortValues(_ key: DatabaseValue, _ table: EntityTable) -> [DatabaseValue]? {
        var sort: [DatabaseValue] = []
        return table.appendSortValues(key, ifMatching: resolved, to: &sort) ? sort : nil
    }

    /// Places many changed IDs at once: their new entries are sorted among themselves and merged
    /// with the others in one pass that also drops their old ones — O(n + k log k) for k changes
    /// among n entries, where placing each (an insertion into the array) would move O(n) entries
    /// k times.
    private func merge(_ changed: Set<DatabaseValue>, _ table: EntityTable) {
        var added = changed.compactMap { sortValues($0, table) }
        added.sort { lhs, rhs in
            lhs.withUnsafeBufferPointer { left in
                rhs.withUnsafeBufferPointer { right in resolved.sortValuesInIncreasingOrder(left[...], right[...]) }
            }
        }
        entries = entries.merging(removing: changed, adding: added, resolved)
        members = nil
    }

    /// The ID a held row's key holds (the table only holds keys of this entity's ID type).
    private static func id(_ key: DatabaseValue) -> E.ID { E.ID.fromDatabaseValue(key)! }

    private func position(of sort: [DatabaseValue], _ key: DatabaseValue) -> Int {
        let index = entries.insertionIndex(sort, resolved)
        if index < entries.count, entries.key(at: index) == key { return index }
        return (0..<entries.count).first { entries.key(at: $0) == key }!
    }
}

extension MainContext {
    /// A live result for `query`, kept current from every merge (see ``LiveQuery``).
    public func observe<E: Entity>(_ query: Query<E>) throws -> LiveQuery<E> {
        try LiveQuery(query: query, context: self)
    }
}

/// Differences between two orderings of unique IDs, in O(n log n): removals and insertions for
/// IDs that left or joined, and associated removal/insertion pairs for IDs whose relative order
/// changed (those outside a longest increasing subsequence).
enum OrderedDifference {
    static func make<ID: Hashable>(from old: [ID], to new: [ID]) -> CollectionDifference<ID> {
        var oldOffsets: [ID: Int] = [:]
        oldOffsets.reserveCapacity(old.count)
        for (offset, id) in old.enumerated() { oldOffsets[id] = offset }
        var newOffsets: [ID: Int] = [:]
        newOffsets.reserveCapacity(new.count)
        for (offset, id) in new.enumerated() { newOffsets[id] = offset }

        // Old offsets of kept IDs, in new order; the longest increasing run stays in place.
        let kept = new.compactMap { oldOffsets[$0] }
        let stable = longestIncreasingSubsequence(kept)
        var changes: [CollectionDifference<ID>.Change] = []
        for (offset, id) in old.enumerated() {
            if let newOffset = newOffsets[id] {
                if !stable.contains(offset) {
                    changes.append(.remove(offset: offset, element: id, associatedWith: newOffset))
                }
            } else {
                changes.append(.remove(offset: offset, element: id, associatedWith: nil))
            }
        }
        for (offset, id) in new.enumerated() {
            if let oldOffset = oldOffsets[id] {
                if !stable.contains(oldOffset) {
                    changes.append(.insert(offset: offset, element: id, associatedWith: oldOffset))
                }
            } else {
                changes.append(.insert(offset: offset, element: id, associatedWith: nil))
            }
        }
        return CollectionDifference(changes)!
    }

    /// The values of one longest strictly increasing subsequence.
    static func longestIncreasingSubsequence(_ values: [Int]) -> Set<Int> {
        var tails: [Int] = []          // indexes into values
        var previous = Array(repeating: -1, count: values.count)
        for (index, value) in values.enumerated() {
            var low = 0, high = tails.count
            while low < high {
                let mid = (low + high) / 2
                if values[tails[mid]] < value { low = mid + 1 } else { high = mid }
            }
            if low > 0 { previous[index] = tails[low - 1] }
            if low == tails.count { tails.append(index) } else { tails[low] = index }
        }
        var result: Set<Int> = []
        var cursor = tails.last ?? -1
        while cursor >= 0 {
            result.insert(values[cursor])
            cursor = previous[cursor]
        }
        return result
    }
}
