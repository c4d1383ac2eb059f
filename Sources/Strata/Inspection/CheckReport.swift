/// The result of ``StoreInspector/check(snapshot:)``: one item per check, each with what it
/// found wrong (nothing, when it passed).
public struct CheckReport: Sendable, Hashable {
    /// One check.
    public struct Item: Sendable, Hashable {
        /// What was checked: `integrity`, `foreign keys`, `change log`, `entity tables` or `snapshot`.
        public let name: String
        /// A short description of what was found, for a passing check.
        public let detail: String
        /// Everything found wrong, one line each.
        public let problems: [String]

        public var passed: Bool { problems.isEmpty }
    }

    public let items: [Item]

    /// Whether every check passed.
    public var passed: Bool { items.allSatisfy(\.passed) }
}
