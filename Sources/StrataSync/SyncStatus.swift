import Foundation
import Observation

/// The state of a ``SyncEngine``, for an app to show: a sync indicator, an offline badge.
///
/// Observable (`@Observable`) and updated on the main actor, so a SwiftUI view that reads
/// ``phase`` redraws when it changes.
///
/// ```swift
/// Text(engine.status.phase == .syncing ? "Syncing…" : "Up to date")
/// ```
@MainActor @Observable
public final class SyncStatus {
    /// What the engine is doing.
    public enum Phase: Sendable, Hashable {
        /// Not started, or stopped (``SyncEngine/stop()``).
        case stopped
        /// Nothing to do; in automatic mode, waiting for changes.
        case idle
        /// Pushing or pulling.
        case syncing
        /// The server cannot be reached or failed: retrying with backoff. Local saves go on.
        case offline(SyncError)
        /// The server refused something: retrying as is cannot help (a new token, an app
        /// update). Local saves go on; ``SyncEngine/sync()`` tries again.
        case failed(SyncError)
    }

    /// What the engine is doing.
    public internal(set) var phase: Phase = .stopped
    /// When the last round that pushed and pulled everything ended.
    public internal(set) var lastSynced: Date?
    /// How many entries were pushed since the engine was made.
    public internal(set) var pushedChanges = 0
    /// How many entries were pulled and applied since the engine was made.
    public internal(set) var pulledChanges = 0

    nonisolated init() {}
}
