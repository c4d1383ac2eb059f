/// Whether a snapshot would warm-start a store, as ``Store/openWarm(at:snapshot:entities:migrations:configuration:)``
/// would judge it (with the app registering every entity the store records).
public enum SnapshotValidity: Sendable, Hashable, CustomStringConvertible {
    /// Same store, schema and generation: it would be used as is.
    case current
    /// The database is ahead by `changes` logged changes, all still in the change log: it would
    /// be used and caught up.
    case behind(changes: Int)
    /// It would be rejected (and the app would cold-start from SQLite): the error says why
    /// (``StrataError/snapshotRejection``) and what and where (``StrataError/message``).
    case invalid(StrataError)

    /// Whether a warm start would use the snapshot.
    public var isValid: Bool {
        if case .invalid = self { return false }
        return true
    }

    /// Why the snapshot would be rejected; nil when it would be used.
    ///
    /// ```swift
    /// if try inspector.snapshotValidity(at: snapshotPath).rejection == .otherStore { … }
    /// ```
    public var rejection: SnapshotRejection? {
        if case .invalid(let error) = self { return error.snapshotRejection }
        return nil
    }

    /// The verdict as a sentence, as `strata snapshot info` prints it.
    public var description: String {
        switch self {
        case .current: return "valid: it would be used as is"
        case .behind(let changes): return "valid: it would be used and caught up (\(changes) change\(changes == 1 ? "" : "s"))"
        case .invalid(let error): return "not valid: \(error.message)"
        }
    }
}
