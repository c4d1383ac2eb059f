extension String {
    /// The string as an SQL identifier, safely double-quoted.
    var quotedIdentifier: String { "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}
