import Foundation

/// A copy of the main context's object graph on its way to a merge off the main actor, and back
/// with the merge's outcome (see `MainContext+PreparedMerge`).
///
/// `@unchecked Sendable`, and safe: the graph is a fresh ``ObjectGraph/preparationCopy()`` that
/// nothing else references. Its tables are new instances; what they share with the main
/// context's tables are copy-on-write values (arrays, dictionaries, value-type indexes), which
/// either side copies before writing, and values that are `Sendable` (the app's entities). The
/// live queries' windows are copies of values (``LiveWindow``), taken on the main actor. The
/// job on the main context's preparation queue that merges into the copy is its only user until
/// it finishes, and the main actor reads it only in the main-actor task that job starts when it
/// is done, which orders all of the job's writes before the main actor's reads.
final class PreparedMerge: @unchecked Sendable {
    let graph: ObjectGraph
    /// The change the merge produced (nil: nothing to publish), or why it failed; nil until run.
    private(set) var outcome: Result<ContextChange?, any Error>?
    /// The entities whose changed keys the live queries need (those observed when the merge started).
    private let observed: Set<String>
    /// The keys of the objects the change lists, for each observed entity it touches
    /// (``ContextChange/EntityChanges/objectKeys``): hashed here rather than on the main actor.
    private(set) var changedKeys: [String: Set<DatabaseValue>] = [:]
    /// The live queries' windows as the merge started, by query, brought up to date here: the
    /// main actor adopts them (``LiveQueryUpdating/adopt(_:_:generation:change:in:)``) instead of
    /// placing the changes and diffing each window itself.
    private(set) var windows: [UUID: Window]

    /// A live query's window, and how the merge changed it (nil: not brought up to date here).
    struct Window {
        let entity: String
        let generation: UInt64
        var window: LiveWindow
        var change: LiveWindow.Change?
    }

    @MainActor
    init(graph: ObjectGraph, liveQueries: [UUID: any LiveQueryUpdating]) {
        self.graph = graph
        observed = Set(liveQueries.values.map(\.entityName))
        windows = liveQueries.mapValues { Window(entity: $0.entityName, generation: $0.generation, window: $0.window) }
    }

    /// Merges the change set into the copy (off the main actor), settling the snapshot orders
    /// before and after: rows the main context changed since its last settle (small change sets
    /// merged in place) are placed first, so that the change set's own new rows, placed after,
    /// usually sort into one gap (``SortedIndex/settle(in:)``).
    func run(sequence: UInt64, changes: ChangeSet) {
        graph.settleOrders()
        outcome = Result { try graph.merge(sequence: sequence, changes: changes) }
        graph.settleOrders()
        if case .success(let change?)? = outcome {
            for (entity, changes) in change.entities where observed.contains(entity) && !changes.isEmpty {
                changedKeys[entity] = changes.objectKeys
            }
            for (id, var window) in windows {
                guard let changed = changedKeys[window.entity], let table = try? graph.table(named: window.entity) else { continue }
                // A failure here is left to the main actor, which reports it as it would.
                window.change = try? window.window.apply(changed, table)
                windows[id] = window
            }
        }
    }
}

/// Tables a prepared merge replaced, released off the main actor: freeing every row's keys and
/// index postings takes time proportional to the table, which the main actor does not spend.
///
/// `@unchecked Sendable`, and safe: it is made from the tables ``ObjectGraph/adopt(_:)`` just
/// took out of the graph, which nothing else references any more (readers reach tables through
/// the graph, by name, and hold none across a suspension), and only the task that releases them
/// touches it after the main actor hands it over.
final class ReplacedTables: @unchecked Sendable {
    private var tables: [EntityTable]

    init(_ tables: [EntityTable]) {
        self.tables = tables
    }

    /// Releases the tables on a background thread.
    static func release(_ tables: consuming [EntityTable]) {
        let box = ReplacedTables(tables)
        Task.detached(priority: .background) { box.tables.removeAll() }
    }
}
