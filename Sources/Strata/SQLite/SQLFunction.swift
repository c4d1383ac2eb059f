import CSQLite
import Foundation

/// A custom SQL function implemented in Swift, callable from any SQL the store runs.
///
/// ```swift
/// let domain = SQLFunction("domain", argumentCount: 1) { arguments in
///     guard case .text(let url) = arguments[0] else { return .null }
///     return URL(string: url)?.host.map(DatabaseValue.text) ?? .null
/// }
/// var configuration = StoreConfiguration()
/// configuration.functions = [domain]
/// let store = try await Store.open(at: path, entities: [Article.self], configuration: configuration)
/// ```
/// Registered with `sqlite3_create_function_v2`. The closure runs on the store's queue while
/// SQLite evaluates a statement; a thrown error fails that statement. The connection keeps the
/// closure until the store goes away: capture the store itself weakly, or it never will.
public struct SQLFunction: Sendable {
    /// The function's name in SQL.
    public let name: String
    /// How many arguments it takes, or -1 for any number.
    public let argumentCount: Int
    /// Whether the same arguments always give the same result.
    public let isDeterministic: Bool
    let body: @Sendable ([DatabaseValue]) throws -> DatabaseValue

    /// - Parameters:
    ///   - name: The SQL name of the function.
    ///   - argumentCount: How many arguments it takes, or -1 for any number.
    ///   - isDeterministic: Whether the same arguments always give the same result (lets SQLite
    ///     use it in indexes and factor it out of loops).
    ///   - body: The implementation.
    public init(
        _ name: String, argumentCount: Int, isDeterministic: Bool = true,
        _ body: @escaping @Sendable ([DatabaseValue]) throws -> DatabaseValue
    ) {
        self.name = name
        self.argumentCount = argumentCount
        self.isDeterministic = isDeterministic
        self.body = body
    }
}

extension Connection {
    func register(_ function: SQLFunction) throws {
        let box = Unmanaged.passRetained(FunctionBox(function.body)).toOpaque()
        let flags = SQLITE_UTF8 | (function.isDeterministic ? SQLITE_DETERMINISTIC : 0)
        let code = sqlite3_create_function_v2(
            handle, function.name, Int32(function.argumentCount), flags, box,
            { context, count, values in
                let box = Unmanaged<FunctionBox>.fromOpaque(sqlite3_user_data(context)).takeUnretainedValue()
                var arguments: [DatabaseValue] = []
                arguments.reserveCapacity(Int(count))
                for index in 0..<Int(count) {
                    arguments.append(DatabaseValue(sqliteValue: values![index]))
                }
                do {
                    setResult(try box.body(arguments), context: context)
                } catch {
                    sqlite3_result_error(context, "\(error)", -1)
                }
            },
            nil, nil,
            { box in box.map { Unmanaged<FunctionBox>.fromOpaque($0).release() } })
        try check(code, sql: "function \(function.name)")
    }

    private final class FunctionBox {
        let body: @Sendable ([DatabaseValue]) throws -> DatabaseValue
        init(_ body: @escaping @Sendable ([DatabaseValue]) throws -> DatabaseValue) { self.body = body }
    }
}

private func setResult(_ value: DatabaseValue, context: OpaquePointer?) {
    switch value {
    case .null: sqlite3_result_null(context)
    case .integer(let int): sqlite3_result_int64(context, int)
    case .real(let real): sqlite3_result_double(context, real)
    case .text(let text):
        // The byte count, not -1: the text may hold NUL characters.
        let utf8 = text.utf8CString
        utf8.withUnsafeBufferPointer { bytes in
            sqlite3_result_text(context, bytes.baseAddress, Int32(bytes.count - 1), strata_sqlite_transient())
        }
    case .blob(let data):
        data.withUnsafeBytes { bytes in
            sqlite3_result_blob(context, bytes.baseAddress, Int32(bytes.count), strata_sqlite_transient())
        }
    }
}

extension DatabaseValue {
    init(sqliteValue value: OpaquePointer?) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            // Read sqlite3_value_bytes bytes (after sqlite3_value_text), not up to the first NUL.
            guard let text = sqlite3_value_text(value) else { self = .text(""); return }
            let count = Int(sqlite3_value_bytes(value))
            self = .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            self = .blob(count > 0 ? Data(bytes: sqlite3_value_blob(value), count: count) : Data())
        default: self = .null
        }
    }
}
