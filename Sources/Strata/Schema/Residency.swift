/// How much of an entity the main context keeps in memory (``Entity/residency``).
///
/// | residency | a fetch | another context's save | eviction | the snapshot |
/// |---|---|---|---|---|
/// | `.resident` | every object, by ``MainContext/loadResidentEntities()`` | registered | never | every object |
/// | `.keptWhenRead` (default) | registered | registered | least recently used beyond ``MainContext/registeredObjectLimit`` | what is held |
/// | `.notKept` | registered | only objects already held are updated | as `.keptWhenRead` | nothing |
///
/// `.notKept` is for join and log entities the UI never lists (links between notes and tags, an
/// event log): saves by workers do not fill the main context or its snapshot with them.
public enum Residency: Sendable, Hashable {
    /// The main context holds every object at all times (small, always-needed sets: feeds, tags).
    case resident
    /// The main context keeps what was fetched into it or saved elsewhere, the least recently used
    /// evicted above ``MainContext/registeredObjectLimit``.
    case keptWhenRead
    /// The main context keeps only what it fetches: saves made elsewhere update objects it holds
    /// and register none, and its snapshot archives none.
    case notKept
}
