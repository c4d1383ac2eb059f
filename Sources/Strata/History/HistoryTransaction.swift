import Foundation

/// One committed transaction of the store's history: a change set a store committed, or what
/// other writers committed between two looks of a store (``Origin/outside``).
///
/// ```swift
/// for try await transaction in store.history(since: token, excludingAuthors: ["sync"]) {
///     for change in transaction.changes where change.operation == .update {
///         print(transaction.author ?? "outside", change.entity, change.ids, change.changedAttributes)
///     }
///     token = transaction.token
/// }
/// ```
public struct HistoryTransaction: Sendable, Hashable, Identifiable {
    /// Who wrote a transaction.
    public enum Origin: Sendable, Hashable {
        /// A change set a Strata store committed (this one, or another opened on the same file):
        /// its ``HistoryTransaction/author`` is known.
        case store
        /// Rows written by anyone else — another connection or process, the `sqlite3` shell,
        /// ``Store/write(_:)``, a migration — as the change log's triggers recorded them. SQL
        /// cannot tell where another connection's transaction ends: what others committed between
        /// two looks of a store is one transaction, dated when the store recorded it.
        case outside
    }

    /// The transaction's position in the history: pass it to ``Store/history(since:entities:authors:excludingAuthors:pageSize:)``
    /// to read what came after, or to ``Store/advanceHistoryConsumer(_:to:)``.
    public let token: ChangeToken
    /// The change set's ``ChangeSet/transactionAuthor``, given at save time
    /// (``WorkerContext/save(author:)``), or else the name of the context that saved it
    /// (``Store/makeWorkerContext(name:mergePolicy:)``; the main context's is `"main"`). Nil for
    /// a change set made with ``ChangeSet``'s API without an author, and for outside transactions.
    public let author: String?
    /// When the transaction was committed (for an outside one, when a store recorded it).
    public let date: Date
    /// Who wrote it.
    public let origin: Origin
    /// What it changed, in the order it was written. A context's save writes its entities in the
    /// order it first edited each, and each entity's objects in the order they were first edited.
    public let changes: [HistoryChange]

    /// The transaction's ``token``.
    public var id: ChangeToken { token }
}

/// One entry of a history transaction: an operation on one object, or on several listed
/// together — a bulk operation (by IDs or by filter: the IDs it matched), or a run of one change
/// set's operations of one kind on one entity.
public struct HistoryChange: Sendable, Hashable {
    /// The entity's name (``Entity/entityName``).
    public let entity: String
    /// What happened to the objects.
    public let operation: LoggedChange.Operation
    /// The objects' primary keys as stored, in the order they were written.
    public let ids: [DatabaseValue]
    /// For an update, the attributes whose values changed, in schema order: a context's save
    /// names those that differ from the copy it edited, a bulk update those it sets, another
    /// writer's update those whose stored values differ (the triggers compare OLD and NEW).
    /// A save made with ``ChangeSet``'s API, or an upsert of an existing object, names every
    /// attribute it wrote. Empty for inserts and deletes, and for the updates a migration made
    /// (while it runs, the triggers name no column, so that it may drop one).
    public let changedAttributes: [String]
    /// The change-log entry it was read from (``LoggedChange/generation`` of each of its IDs).
    let generation: Int64
}
