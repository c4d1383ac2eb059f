import Foundation

extension Store {
    /// The current position of the change log, after everything submitted so far is committed.
    public func currentChangeToken() async throws -> ChangeToken {
        try await persist()
        return try await onQueue { writer in ChangeToken(generation: try ChangeLog.generation(writer.connection)) }
    }

    /// Every committed change after `token` — made through Strata or by anyone else writing the
    /// file — in order, and the token to ask from next time. For reconciling with a sync server
    /// ("what did I mark read since the last sync?").
    ///
    /// To read it in pages, with authors, commit times and changed attributes, use
    /// ``history(since:entities:authors:excludingAuthors:pageSize:)``: both read the same log.
    /// - Throws: ``StrataError/Code/historyExpired`` when the log no longer reaches back to
    ///   `token` (it was pruned): the caller must resynchronize fully.
    public func changes(since token: ChangeToken) async throws -> ChangeHistory {
        try await onQueue { writer in try self.history(since: token, writer.connection) }
    }

    func history(since token: ChangeToken, _ connection: Connection) throws -> ChangeHistory {
        try ChangeLog.checkNotExpired(token.generation, connection, path: path)
        let names = Dictionary(uniqueKeysWithValues: try connection.rows("SELECT rowid, name FROM \(SchemaMigrator.entitiesTable)")
            .compactMap { row in Int64.fromDatabaseValue(row[0]).flatMap { code in String.fromDatabaseValue(row[1]).map { (code, $0) } } })
        var changes: [LoggedChange] = []
        var newest = token.generation
        for row in try connection.rows("SELECT generation, entity, key, op FROM \(ChangeLog.table) WHERE generation > ? ORDER BY generation",
                                       [.integer(token.generation)]) {
            guard let generation = Int64.fromDatabaseValue(row[0]), let code = Int64.fromDatabaseValue(row[1]),
                  let op = Int64.fromDatabaseValue(row[3]) else { continue }
            newest = generation
            let operation = ChangeLog.operation(op)
            for key in try ChangeLog.keys(of: row[2], generation: generation) {
                changes.append(LoggedChange(generation: generation, entity: names[code] ?? "#\(code)", key: key, operation: operation))
            }
        }
        return ChangeHistory(changes: changes, token: ChangeToken(generation: max(newest, try ChangeLog.generation(connection))))
    }
}
