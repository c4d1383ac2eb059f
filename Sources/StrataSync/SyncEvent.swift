import Strata

/// What a ``SyncEngine`` reports while it works (``SyncEngine/events()``).
///
/// ```swift
/// for await event in engine.events() {
///     if case .pushed(let count) = event { print("sent \(count) changes") }
/// }
/// ```
public enum SyncEvent: Sendable, Hashable {
    /// A round (pull, then push) started.
    case started
    /// A batch of `changes` entries was acknowledged by the server.
    case pushed(changes: Int)
    /// A page of `changes` entries from other devices was applied to the store.
    case pulled(changes: Int)
    /// A conflict with an unpushed local edit was settled.
    case conflictResolved(SyncConflict, SyncConflictOutcome)
    /// The server no longer serves the cursor: the store is brought up to date from every
    /// object's state (its unpushed edits are kept).
    case fullPullStarted
    /// A round failed; when ``SyncError/isTransient``, it is retried after `retryIn` seconds
    /// (automatic mode only; nil otherwise).
    case failed(SyncError, retryIn: Double?)
    /// Nothing is left to push or pull.
    case idle
}
