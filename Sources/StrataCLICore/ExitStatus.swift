/// The `strata` command's exit codes.
public enum ExitStatus {
    /// Everything went well.
    public static let ok: Int32 = 0
    /// A check failed (`check`, `snapshot info --store`, the demo's integrity check), or an
    /// operation failed for a reason other than the input.
    public static let failure: Int32 = 1
    /// Bad usage: unknown option, bad value, an unknown entity or attribute in `--where`.
    public static let usage: Int32 = 2
    /// Bad input file: missing, not SQLite, not a Strata store, from a newer Strata, corrupt (which
    /// `check` reports as a failed check instead).
    public static let badInput: Int32 = 3
    /// Interrupted by Ctrl-C (SIGINT) — 128 plus the signal's number, as shells report it.
    public static let interrupted: Int32 = 130
}
