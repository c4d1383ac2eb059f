import CSQLite
import Foundation

/// A prepared statement. Confined, like its ``Connection``, to the connection's queue.
final class Statement: CellSource {
    let handle: OpaquePointer
    let sql: String
    private unowned let connection: Connection
    private var arguments: [DatabaseValue] = []

    init(connection: Connection, sql: String, persistent: Bool) throws {
        var handle: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        try connection.check(sqlite3_prepare_v3(connection.handle, sql, -1, flags, &handle, nil), sql: sql)
        guard let handle else {
            throw StrataError(.misuse, "the SQL holds no statement", sql: sql)
        }
        self.handle = handle
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    var columnCount: Int { Int(sqlite3_column_count(handle)) }

    func columnName(at index: Int) -> String { String(cString: sqlite3_column_name(handle, Int32(index))) }

    /// Resets the statement and binds `values` to its parameters, in order.
    func bind(_ values: [DatabaseValue]) throws {
        sqlite3_reset(handle)
        // Parameters left unbound keep their last values unless cleared; when every one is bound
        // below, clearing them first would only cost a pass over all of them.
        if values.count < sqlite3_bind_parameter_count(handle) { sqlite3_clear_bindings(handle) }
        arguments = values
        for (offset, value) in values.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    private func bind(_ value: DatabaseValue, at index: Int32) throws {
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(handle, index)
        case .integer(let int): code = sqlite3_bind_int64(handle, index, int)
        case .real(let real): code = sqlite3_bind_double(handle, index, real)
        case .text(let text):
            // Bind the UTF-8 byte count, not -1: a String may hold NUL characters, which a
            // NUL-terminated C string would silently cut off.
            //
            // A string longer than a small string's 15 bytes keeps its UTF-8 in its own storage
            // (or a literal's), which `arguments` holds until the next bind replaces every
            // binding: SQLite may read it there (`SQLITE_STATIC`: nil) instead of copying it.
            // Copying each title and summary of an import would be a malloc, a copy and a free
            // per value on the writer.
            if text.utf8.count > 15, let bound = text.utf8.withContiguousStorageIfAvailable({ bytes in
                sqlite3_bind_text(handle, index, bytes.baseAddress, Int32(bytes.count), nil)
            }) {
                code = bound
                break
            }
            // Otherwise `withUTF8` gives the bytes (a small string's from a temporary copy),
            // which SQLite copies. An empty string may have no address, and a NULL pointer would
            // bind NULL, so it binds a static empty string.
            var text = text
            code = text.withUTF8 { bytes in
                guard let address = bytes.baseAddress, !bytes.isEmpty else {
                    return sqlite3_bind_text(handle, index, "", 0, strata_sqlite_transient())
                }
                return sqlite3_bind_text(handle, index, address, Int32(bytes.count), strata_sqlite_transient())
            }
        case .blob(let data):
            code = data.withUnsafeBytes { bytes in
                // A zero-length blob must still bind as a blob, not NULL: pass a valid pointer.
                sqlite3_bind_blob(handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                                  Int32(bytes.count), strata_sqlite_transient())
            }
        }
        // The connection (an unowned reference) is reached only for a failure.
        if code != SQLITE_OK { try connection.check(code, sql: sql, arguments: arguments) }
    }

    /// Advances to the next row. Returns `false` when the statement is done.
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        let error = connection.error(code: code, sql: sql, arguments: arguments)
        sqlite3_reset(handle)
        throw error
    }

    /// Runs the statement to completion, ignoring rows.
    func run(_ values: [DatabaseValue] = []) throws {
        try bind(values)
        while try step() {}
        sqlite3_reset(handle)
    }

    /// Resets the statement so that it holds no read lock between uses.
    func reset() { sqlite3_reset(handle) }

    func value(at index: Int) -> DatabaseValue {
        switch cell(at: index) {
        case .null: .null
        case .integer(let integer): .integer(integer)
        case .real(let real): .real(real)
        case .text(let bytes): .text(String(decoding: bytes, as: UTF8.self))
        case .blob(let bytes): .blob(Data(bytes))
        }
    }

    /// The value of column `index` of the current row with its bytes borrowed from SQLite
    /// (``RawCell``: valid until the statement steps or resets) — ``value(at:)`` without the
    /// `String` or `Data` it makes.
    func cell(at index: Int) -> RawCell {
        let column = Int32(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            // The pointer first, then its length (SQLite's advice); no pointer: no bytes.
            guard let text = sqlite3_column_text(handle, column) else { return .text(UnsafeRawBufferPointer(start: nil, count: 0)) }
            return .text(UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, column))))
        case SQLITE_BLOB:
            guard let blob = sqlite3_column_blob(handle, column) else { return .blob(UnsafeRawBufferPointer(start: nil, count: 0)) }
            return .blob(UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(handle, column))))
        default: return .null
        }
    }

    /// Runs the statement, calling `body` with the statement positioned on each row in turn
    /// (read its columns with ``value(at:)``), then resets it.
    func forEachRow(_ values: [DatabaseValue] = [], _ body: (Statement) throws -> Void) throws {
        try bind(values)
        defer { sqlite3_reset(handle) }
        while try step() { try body(self) }
    }

    /// All rows as arrays of values, in column order.
    func rows(_ values: [DatabaseValue] = []) throws -> [[DatabaseValue]] {
        var rows: [[DatabaseValue]] = []
        let count = columnCount
        try forEachRow(values) { statement in rows.append((0..<count).map(statement.value(at:))) }
        return rows
    }
}
