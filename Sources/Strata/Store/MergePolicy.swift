/// What happens when a change saved elsewhere touches an object a context has unsaved edits to —
/// or, once the edits are saved, an object someone outside the store changed after the context
/// read it.
///
/// Conflicts are detected by version: every object a context holds remembers the store sequence
/// its copy reflects, and an edit remembers the version it was made on. A merge of a later
/// sequence that touches an edited object is a conflict. A change committed from outside the
/// store (another process, the `sqlite3` shell, ``Store/write(_:)``) reaches the contexts as a
/// change set of its own (``ContextChange/Origin/remote``), so it conflicts the same way; and
/// when it lands after a context saved but before the save is written, the writer sees it in
/// its transaction and resolves the save by the same policy, so the file and every context end
/// equal.
///
/// | local edit \\ change elsewhere | update | delete |
/// |---|---|---|
/// | update, `.mergeProperties` (default) | the attributes edited locally keep the local values, every other attribute takes the stored one | deleted (nothing to merge into) |
/// | update, `.localWins` | local kept whole | local kept (saved as an upsert: the object comes back) |
/// | update, `.storeWins` | stored taken | deleted |
/// | delete, `.mergeProperties` / `.localWins` | still deleted | deleted |
/// | delete, `.storeWins` | stored taken (undeleted) | deleted |
/// | any, `.reportConflict` | local kept and marked; saving throws ``StrataError/Code/conflict`` naming the IDs until each is resolved (``MainContext/resolveConflict(_:id:by:)``) | same |
///
/// With the default, two contexts editing different attributes of one object both keep their
/// edits, in either order; only an attribute both edited takes the later save's value.
public enum MergePolicy: Sendable, Hashable {
    /// The context's unsaved edits win whole (Brent Simmons' "main wins"): attributes it did not
    /// edit are written back as it read them.
    case localWins
    /// The store's change wins; the local edit to that object is discarded.
    case storeWins
    /// Local edits win only for the attributes edited locally; other attributes take the store's
    /// values (the default: nothing anyone saved is dropped).
    case mergeProperties
    /// Nothing is resolved automatically: saving throws a conflict error with the conflicting IDs
    /// until each is resolved, one object at a time, by ``ConflictResolution``.
    case reportConflict

    /// The default of every context.
    public static let `default` = MergePolicy.mergeProperties

    /// The attribute-level merge: `local`'s values for the attributes it changed from `base` (every
    /// attribute when there is no base), `stored`'s for every other. The one place this rule is
    /// written: contexts merge with it, and the writer resolves a save against an outside change
    /// with it.
    static func merged(local: [DatabaseValue], base: [DatabaseValue]?, onto stored: [DatabaseValue]) -> [DatabaseValue] {
        guard let base, base.count == local.count, stored.count == local.count else { return local }
        var merged = stored
        for position in merged.indices where base[position] != local[position] {
            merged[position] = local[position]
        }
        return merged
    }
}

/// How one conflicted edit is resolved under ``MergePolicy/reportConflict`` — without touching the
/// context's other unsaved edits (``MainContext/rollback()`` discards all of them).
public enum ConflictResolution: Sendable, Hashable {
    /// The edit is discarded: the object shows the stored copy (or stays deleted).
    case takeStored
    /// The edit is applied again on top of the stored copy: the attributes it changed keep its
    /// values, every other attribute takes the stored one (an edit of an object deleted since
    /// saves it again; a deletion stays a deletion). The edit is no longer conflicted.
    case reapplyEdit
}
