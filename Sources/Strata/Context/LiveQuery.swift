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
    /// The window and its ``generation``, for a merge prepared off the main actor to bring a copy
    /// of up to date on its copy of the tables.
    var window: LiveWindow { get }
    /// How many times the window changed on the main actor.
    var generation: UInt64 { get }
    /// Takes `window`, brought up to date with `change` (by `windowChange`) off the main actor
    /// from the window of generation `generation`, and publishes it; false (nothing done) when
    /// the window changed since.
    func adopt(_ window: LiveWindow, _ windowChange: LiveWindow.Change, generation: UInt64, change: ContextChange,
               in context: MainContext) -> Bool
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
    /// Every match in order, the window's keys and rows (``LiveWindow``): what follows merges.
    @ObservationIgnored private(set) var window: LiveWindow
    @ObservationIgnored private(set) var generation: UInt64 = 0
    @ObservationIgnored private var streams: [UUID: AsyncStream<LiveQueryDiff<E.ID>>.Continuation] = [:]
    @ObservationIgnored private var valueStreams: [UUID: AsyncThrowingStream<[E], Error>.Continuation] = [:]
    @ObservationIgnored private let key = UUID()

    init(query: Query<E>, context: MainContext) throws {
        self.query = query
        self.context = context
        self.resolved = try ResolvedQuery(query, schema: context.store.registry.schema(for: E.self))
        self.window = LiveWindow(resolved)
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

    var heldKeys: [DatabaseValue] { window.keys }

    nonisolated var entityName: String { E.entityName }

    func apply(_ change: ContextChange, changed: Set<DatabaseValue>, in context: MainContext) {
        guard !changed.isEmpty else { return }
        do {
            show(try window.apply(changed, try table()), sequence: change.sequence, publish: true)
        } catch {
            fail(error, in: context)
        }
        if E.residency != .resident, change.origin == .bulkOperation { refetch() }
    }

    func adopt(_ window: LiveWindow, _ windowChange: LiveWindow.Change, generation: UInt64, change: ContextChange,
               in context: MainContext) -> Bool {
        guard generation == self.generation else { return false }
        self.window = window
        show(windowChange, sequence: change.sequence, publish: true)
        if E.residency != .resident, change.origin == .bulkOperation { refetch() }
        return true
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
    private func recompute(sequence: UInt64, publish: Bool) throws {
        show(try window.recompute(try table()), sequence: sequence, publish: publish)
    }

    /// Shows the window as it is now: its IDs and values, when `windowChange` changed it, and
    /// publishes the diff (or, when `publish` is false, shows the first result).
    private func show(_ windowChange: LiveWindow.Change, sequence: UInt64, publish: Bool) {
        generation += 1
        guard let context else { return }
        if error != nil { error = nil }
        guard !windowChange.isEmpty || !publish else { return }
        let keys = window.keys
        ids = keys.map(Self.id)
        do {
            values = try context.graph.table(E.self).visible(E.self, keys: keys)
        } catch {
            fail(error, in: context)
        }
        guard publish else { return }
        let diff = LiveQueryDiff(difference: Self.ids(of: windowChange.difference), updated: Set(windowChange.updated.map(Self.id)),
                                 sequence: sequence)
        for stream in streams.values { stream.yield(diff) }
        for stream in valueStreams.values { stream.yield(values) }
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

    /// The ID a held row's key holds (the table only holds keys of this entity's ID type).
    private static func id(_ key: DatabaseValue) -> E.ID { E.ID.fromDatabaseValue(key)! }
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
