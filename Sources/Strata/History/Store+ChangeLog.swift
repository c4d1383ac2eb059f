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
    /// It is read by the same reader as ``history(since:entities:authors:excludingAuthors:pageSize:)``
    /// — which also gives authors, commit times and changed attributes, a page at a time — every
    /// page in one read on the store's queue, and each entry's IDs listed one by one.
    /// - Throws: ``StrataError/Code/historyExpired`` when the log no longer reaches back to
    ///   `token` (it was pruned): the caller must resynchronize fully.
    public func changes(since token: ChangeToken) async throws -> ChangeHistory {
        try await onQueue { writer in try self.changes(since: token, writer.connection) }
    }

    /// Every history page after `token`, with the entries no transaction claims yet (what other
    /// writers committed since the store last looked), flattened to one change per ID.
    private func changes(since token: ChangeToken, _ connection: Connection) throws -> ChangeHistory {
        let request = HistoryRequest(entities: nil, authors: nil, excludedAuthors: [], pageSize: 1_000, unclaimedDate: Date())
        var changes: [LoggedChange] = []
        var position = token.generation
        while true {
            let page = try request.page(after: position, connection, path: path)
            for change in page.transactions.lazy.flatMap(\.changes) {
                for key in change.ids {
                    changes.append(LoggedChange(generation: change.generation, entity: change.entity, key: key,
                                                operation: change.operation))
                }
            }
            position = page.token.generation
            if page.isLast { break }
        }
        return ChangeHistory(changes: changes, token: ChangeToken(generation: max(position, try ChangeLog.generation(connection))))
    }
}
