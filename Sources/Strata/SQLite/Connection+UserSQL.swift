import CSQLite

/// SQL written by the library's user (through ``Database``) runs inside transactions Strata owns:
/// the change-set pipeline's, a ``Store/write(_:)`` transaction, a migration's. Ending or
/// splitting one of those from user SQL would commit half a save or release a savepoint Strata
/// still counts on, so SQLite's authorizer denies transaction control (`BEGIN`, `COMMIT`, `END`,
/// `ROLLBACK`, `SAVEPOINT`, `RELEASE`) while user SQL is prepared, and the denial becomes a typed
/// ``StrataError/Code/misuse`` error. ``Database/inSavepoint(_:)`` is the supported way to nest.
extension Connection {
    static let userSQLKeyPrefix = "user:"

    /// Runs `body`, which prepares and runs user SQL, with transaction control denied.
    /// - Throws: ``StrataError/Code/misuse`` if triggers are off on this connection (only the
    ///   writer's own change sets run so, `Writer.applyingOwnChanges`): user SQL must be logged.
    func runningUserSQL<T>(_ body: () throws -> T) throws -> T {
        guard try triggersEnabled else {
            throw StrataError(.misuse, "user SQL ran while triggers were off on the writer's connection: "
                              + "the change log would miss its writes", path: path)
        }
        userSQLDepth += 1
        defer { userSQLDepth -= 1 }
        do {
            return try body()
        } catch let error as StrataError where error.sqliteCode == SQLITE_AUTH {
            // Only an authorizer returns SQLITE_AUTH, and this one denies nothing else.
            throw StrataError(.misuse, """
                transaction control (BEGIN, COMMIT, END, ROLLBACK, SAVEPOINT, RELEASE) is not allowed in SQL run \
                through Database: the store owns the transaction; use db.inSavepoint { } to nest
                """, path: path, sql: error.sql)
        }
    }

    /// Installs the authorizer that enforces the rule above; Strata's own SQL is never denied.
    func installAuthorizer() throws {
        try check(sqlite3_set_authorizer(handle, { context, action, _, _, _, _ in
            guard let context, action == SQLITE_TRANSACTION || action == SQLITE_SAVEPOINT else { return SQLITE_OK }
            // The context is the connection itself, unretained: the authorizer runs synchronously
            // inside sqlite3_prepare on the connection's own queue, and the connection closes its
            // handle (so no callback can follow) before it is deallocated.
            let connection = Unmanaged<Connection>.fromOpaque(context).takeUnretainedValue()
            return connection.userSQLDepth > 0 ? SQLITE_DENY : SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque()))
    }
}
