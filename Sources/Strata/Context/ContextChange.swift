import Foundation

/// What one merge changed in a context: inserted, updated (with the changed attributes) and
/// deleted object IDs per entity, and where the change came from.
///
/// ```swift
/// for await change in main.changes() {
///     let read = change.updated(Article.self).filter { $0.value.contains("isRead") }
/// }
/// ```
public struct ContextChange: Sendable {
    /// Where a merged change came from.
    public enum Origin: Sendable, Hashable {
        /// A context's save; the name given when the context was made ("main" for the main context).
        case context(String)
        /// A bulk update or delete submitted to the store directly.
        case bulkOperation
        /// A change set submitted to the store directly.
        case store
        /// Objects re-read from the store (catch-up after a warm start, or a failed save undone).
        case reload
        /// What someone outside the store committed to its file — another connection or process,
        /// the `sqlite3` shell, ``Store/write(_:)`` — found when the store next committed or read.
        case remote
    }

    /// The changes to one entity, net over the change set: each object is listed once, by how
    /// it differs from before the change set. IDs are the stored primary-key values; use the
    /// typed accessors on ``ContextChange`` to get `Entity.ID`s.
    public struct EntityChanges: Sendable, Hashable {
        /// The primary keys of the objects inserted: the context did not hold them before.
        public internal(set) var inserted: Set<DatabaseValue> = []
        /// The primary keys of the objects updated, each with the attributes (coding keys) that
        /// changed. An object deleted and inserted again in one change set is updated in every
        /// attribute.
        public internal(set) var updated: [DatabaseValue: Set<String>] = [:]
        /// The primary keys of the objects deleted: the context held them before.
        public internal(set) var deleted: Set<DatabaseValue> = []

        /// Whether nothing of this entity changed.
        public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

        /// Lists `id` as inserted — or, when the same change set deleted it before (so the
        /// context held it before the change set and holds it after), as updated in every
        /// attribute (`attributes`: the entity's), so that an observer neither misses that it
        /// changed nor, when a later operation deletes it again, that it went.
        mutating func insert(_ id: DatabaseValue, attributes: @autoclosure () -> Set<String>) {
            // Each lookup hashes the key: skipped where the collection is empty (a change set of
            // new objects lists thousands of inserts and nothing else).
            if !deleted.isEmpty, deleted.remove(id) != nil {
                updated[id] = attributes()
                return
            }
            if updated.isEmpty || updated[id] == nil { inserted.insert(id) }
        }

        /// The primary keys of every object listed: inserted, updated or deleted.
        var objectKeys: Set<DatabaseValue> {
            if inserted.isEmpty, deleted.isEmpty { return Set(updated.keys) }
            var keys = Set<DatabaseValue>(minimumCapacity: inserted.count + updated.count + deleted.count)
            keys.formUnion(inserted)
            keys.formUnion(updated.keys)
            keys.formUnion(deleted)
            return keys
        }

        /// Makes room for `count` more inserted keys.
        mutating func reserveInserts(_ count: Int) {
            inserted.reserveCapacity(inserted.count + count)
        }

        /// Makes room for `count` more updated keys.
        mutating func reserveUpdates(_ count: Int) {
            updated.reserveCapacity(updated.count + count)
        }

        mutating func update(_ id: DatabaseValue, keys: Set<String>) {
            if keys.isEmpty || !inserted.isEmpty && inserted.contains(id) { return }
            // A first update keeps the caller's set (a bulk update passes one set for all its
            // objects); one hash of the key unless the object was updated before.
            if let earlier = updated.updateValue(keys, forKey: id), earlier != keys {
                updated[id]!.formUnion(earlier)
            }
        }

        mutating func delete(_ id: DatabaseValue) {
            if inserted.remove(id) == nil { deleted.insert(id) }
            updated[id] = nil
        }
    }

    /// Where the change came from: a context's save, the store, a bulk operation or a reload.
    public let origin: Origin
    /// The store sequence of the merged change set.
    public let sequence: UInt64
    /// Changes by entity name.
    public internal(set) var entities: [String: EntityChanges] = [:]

    /// Whether the change changed nothing.
    public var isEmpty: Bool { entities.values.allSatisfy(\.isEmpty) }

    /// The IDs of the objects of `type` that were inserted.
    public func inserted<E: Entity>(_ type: E.Type) -> Set<E.ID> {
        Set((entities[E.entityName]?.inserted ?? []).compactMap(E.ID.fromDatabaseValue))
    }

    /// The IDs of the objects of `type` that were updated, each with the attributes (coding keys)
    /// that changed.
    public func updated<E: Entity>(_ type: E.Type) -> [E.ID: Set<String>] {
        var result: [E.ID: Set<String>] = [:]
        for (key, keys) in entities[E.entityName]?.updated ?? [:] {
            if let id = E.ID.fromDatabaseValue(key) { result[id] = keys }
        }
        return result
    }

    /// The IDs of the objects of `type` that were deleted.
    public func deleted<E: Entity>(_ type: E.Type) -> Set<E.ID> {
        Set((entities[E.entityName]?.deleted ?? []).compactMap(E.ID.fromDatabaseValue))
    }

    /// Whether the change touches any object of `type`.
    public func touches<E: Entity>(_ type: E.Type) -> Bool { !(entities[E.entityName]?.isEmpty ?? true) }
}
