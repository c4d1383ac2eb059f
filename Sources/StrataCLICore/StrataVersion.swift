/// The version `strata --version` prints: the one place it is written.
enum StrataVersion {
    static let current = "0.1.0"
}
