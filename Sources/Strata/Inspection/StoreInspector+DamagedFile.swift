extension StoreInspector {
    /// Checks a file that ``init(path:)`` refused as damaged (`.corrupt`): a truncated file, a
    /// page SQLite cannot read, bookkeeping rows that make no sense.
    ///
    /// SQLite refuses to read anything from a file shorter than its header says, and from one
    /// whose schema it cannot read. Its integrity check can still judge such a file with
    /// `PRAGMA writable_schema = ON` (which skips those refusals): the file is attached, read-only,
    /// to an in-memory connection that has it set, and `integrity_check` runs there. (Its heading
    /// therefore names the attached database: `*** in database store ***`.) The checks that need
    /// the store's bookkeeping — foreign keys, change log, entity tables, the snapshot — fail with
    /// the reason they could not run.
    ///
    /// ```swift
    /// do {
    ///     report = try StoreInspector(path: path).check()
    /// } catch let error as StrataError where error.code == .corrupt {
    ///     report = try StoreInspector.checkDamagedFile(at: path, openError: error)
    /// }
    /// ```
    /// - Parameters:
    ///   - path: the store file.
    ///   - snapshot: a snapshot that was to be checked against the store; it fails unchecked.
    ///   - openError: what ``init(path:)`` threw, named in the checks that could not run.
    /// - Throws: `.notADatabase` when the file is not SQLite at all; `.cannotOpen`.
    public static func checkDamagedFile(at path: String, snapshot: String? = nil,
                                        openError: StrataError) throws -> CheckReport {
        if let snapshot { try requireSnapshotFile(snapshot) }
        var options = Connection.Options()
        options.readOnly = true
        // A database attached to a read-only connection is opened read-only too.
        let problems: [String]
        do {
            let connection = try Connection(path: ":memory:", options: options)
            try connection.execute("PRAGMA writable_schema = ON")
            try connection.execute("ATTACH DATABASE ? AS store", [.text(path)])
            problems = try connection.integrityProblems(in: "store")
        } catch var error as StrataError {
            error.path = path
            throw error
        }
        let notChecked = "not checked: the store's bookkeeping cannot be read (\(openError.message))"
        var items = [CheckReport.Item(name: CheckReport.Item.integrity, detail: "PRAGMA integrity_check: ok", problems: problems)]
        for name in [CheckReport.Item.foreignKeys, CheckReport.Item.changeLog, CheckReport.Item.history,
                     CheckReport.Item.entityTables, CheckReport.Item.storedValues]
            + (snapshot == nil ? [] : [CheckReport.Item.snapshot]) {
            items.append(CheckReport.Item(name: name, detail: "", problems: [notChecked]))
        }
        return CheckReport(items: items)
    }
}
