import CSQLite

/// The one checked path for SQLite result codes: every C call that returns a result code goes
/// through ``SQLiteResult/check(_:db:sql:arguments:path:)``, which turns a failure into a
/// ``StrataError`` with SQLite's codes, its message, the SQL and (when allowed) the arguments.
enum SQLiteResult {
    /// Returns `code` when it is a success code (`OK`, `ROW`, `DONE`), throws otherwise.
    @discardableResult
    static func check(
        _ code: Int32, db: OpaquePointer?, sql: String? = nil, arguments: [DatabaseValue]? = nil,
        path: String? = nil
    ) throws -> Int32 {
        switch code {
        case SQLITE_OK, SQLITE_ROW, SQLITE_DONE: return code
        default: throw error(code: code, db: db, sql: sql, arguments: arguments, path: path)
        }
    }

    static func error(
        code: Int32, db: OpaquePointer?, sql: String? = nil, arguments: [DatabaseValue]? = nil,
        path: String? = nil
    ) -> StrataError {
        let extended = db.map { sqlite3_extended_errcode($0) } ?? code
        let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        var error = StrataError(Self.code(for: code), message, path: path, sql: sql)
        error.sqliteCode = code & 0xFF
        error.extendedSQLiteCode = extended
        error.arguments = arguments
        return error
    }

    static func code(for result: Int32) -> StrataError.Code {
        switch result & 0xFF {
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_FULL: return .diskFull
        case SQLITE_IOERR: return .ioError
        case SQLITE_CONSTRAINT: return .constraint
        case SQLITE_NOTADB: return .notADatabase
        case SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM: return .cannotOpen
        case SQLITE_CORRUPT: return .corrupt
        case SQLITE_INTERRUPT: return .interrupted
        case SQLITE_MISUSE: return .misuse
        case SQLITE_MISMATCH: return .typeMismatch
        default: return .sqlite
        }
    }
}
