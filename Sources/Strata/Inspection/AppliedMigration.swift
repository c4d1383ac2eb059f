import Foundation

/// One step recorded in a store's `strata_migrations`: a named migration the app declared, or
/// an automatic step of the schema diff (a table created, a column added or renamed, a table
/// rebuilt, an index made…). Together, in order, they are the store's schema history.
public struct AppliedMigration: Sendable, Hashable {
    /// Whether a step was the app's named migration or one of Strata's automatic steps.
    public enum Kind: String, Sendable, Hashable {
        /// A ``Migration`` the app declared.
        case named = "migration"
        /// A step of the automatic schema diff.
        case automatic
    }

    /// The migration's name, or the automatic step's description (`add column notes.archived`).
    public let name: String
    /// Who made the step.
    public let kind: Kind
    /// When the step was recorded (the first time, for a step that recurs: its name is kept once).
    public let appliedAt: Date
}
