/// The extent of a store's change log (`strata_changes`).
///
/// Generations are the log's row IDs: every change after ``floor`` is in the log, and the newest
/// generation is the store's generation (0 for an empty log).
public struct ChangeLogRange: Sendable, Hashable {
    /// The highest generation pruned away (`strata_meta` `log_floor`; 0 when never pruned).
    public let floor: Int64
    /// The oldest generation still logged, if any.
    public let oldest: Int64?
    /// The newest generation logged, if any.
    public let newest: Int64?
    /// The number of logged changes.
    public let entries: Int

    /// The store's generation: the newest logged change, or 0.
    public var generation: Int64 { newest ?? 0 }
}
