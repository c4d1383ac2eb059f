/// The result of ``StoreInspector/check(snapshot:)`` (or of
/// ``StoreInspector/checkDamagedFile(at:snapshot:openError:)``): one item per check, each with what
/// it found wrong (nothing, when it passed).
public struct CheckReport: Sendable, Hashable {
    /// One check.
    public struct Item: Sendable, Hashable {
        /// What was checked: `integrity`, `foreign keys`, `change log`, `history`, `entity
        /// tables`, `stored values` or `snapshot`.
        public let name: String
        /// A short description of what was found, for a passing check.
        public let detail: String
        /// Everything found wrong, one entry each. An entry may span lines: SQLite's integrity
        /// report is a heading (`*** in database main ***`) and then one line per finding.
        public let problems: [String]

        /// Whether the check found nothing wrong.
        public var passed: Bool { problems.isEmpty }

        static let integrity = "integrity", foreignKeys = "foreign keys", changeLog = "change log"
        static let history = "history"
        static let entityTables = "entity tables", storedValues = "stored values", snapshot = "snapshot"
    }

    /// Every check that ran, in the order it ran.
    public let items: [Item]

    /// Whether every check passed.
    public var passed: Bool { items.allSatisfy(\.passed) }
}
