/// What a context does when a change saved elsewhere touches an object it has unsaved edits to.
///
/// Conflicts are detected by version: every object a context holds remembers the store sequence
/// its copy reflects, and an edit remembers the version it was made on. A merge of a later
/// sequence that touches an edited object is a conflict; values are never compared.
///
/// | local edit \ remote change | update | delete |
/// |---|---|---|
/// | update, `.localWins` | local kept | local kept (saved as an upsert: the object comes back) |
/// | update, `.storeWins` | remote taken | deleted |
/// | update, `.mergeProperties` | locally edited properties kept, the rest remote | deleted (nothing to merge into) |
/// | delete, `.localWins` / `.mergeProperties` | still deleted | deleted |
/// | delete, `.storeWins` | remote taken (undeleted) | deleted |
/// | any, `.reportConflict` | local kept; ``MainContext/save()`` / ``WorkerContext/save()`` throw ``StrataError/Code/conflict`` naming the IDs until resolved | same |
public enum MergePolicy: Sendable, Hashable {
    /// The context's unsaved edits win (the default; Brent Simmons' "main wins").
    case localWins
    /// The store's change wins; the local edit to that object is discarded.
    case storeWins
    /// Local edits win only for the properties edited locally; other properties take the store's values.
    case mergeProperties
    /// Nothing is resolved automatically: saving throws a conflict error with the conflicting IDs.
    case reportConflict
}
