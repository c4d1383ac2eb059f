import Foundation

extension Connection {
    /// The URI filename that opens `path` as immutable: `file:///absolute/path?immutable=1`.
    ///
    /// SQLite reads an immutable database without locks and without its `-wal` and `-shm`
    /// companions: it neither creates nor reads them. That is what lets a WAL-mode file be read in
    /// a directory the process cannot write (where a shared read-only open fails, because SQLite
    /// would have to create a companion there). The price: changes still in the `-wal` are not
    /// seen, and nothing may write the file while it is open.
    ///
    /// The path is made absolute (an empty authority keeps a path that starts with `//` a path)
    /// and percent-encoded: `?`, `#` and `%` would otherwise end it or escape part of it.
    static func immutableURI(_ path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        let encoded = absolute.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? absolute
        return "file://" + encoded + "?immutable=1"
    }
}
