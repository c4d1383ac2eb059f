import Foundation

// `StrataError` as Foundation presents errors: `localizedDescription` (alerts, logs, `print`)
// and `NSError` (the "Strata" domain, a stable number per code, the context in `userInfo`).

extension StrataError: LocalizedError {
    /// What happened and where, as a sentence: the ``message``, then the entity, attribute,
    /// object ID and file the error names, unless the message already names them.
    ///
    /// `error.localizedDescription` returns this text, for example
    /// `"UNIQUE constraint failed: contacts.email (entity Contact, id 3, file /data/app.sqlite)."`.
    /// The SQL and SQLite's result codes are in ``description``, ``sql`` and ``errorUserInfo``.
    public var errorDescription: String? {
        let context = location.filter { !Self.text(message, names: $0.value) }
        var text = message.prefix(1).uppercased() + message.dropFirst()
        if !context.isEmpty { text += " (" + context.map { "\($0.label) \($0.value)" }.joined(separator: ", ") + ")" }
        return text.hasSuffix(".") ? text : text + "."
    }

    /// What the ``code`` means, with SQLite's result codes when SQLite reported the failure.
    public var failureReason: String? {
        let explanation = code.base.explanation
        guard let sqliteCode else { return explanation }
        return explanation.dropLast() + " (SQLite result code \(sqliteCode), extended \(extendedSQLiteCode ?? sqliteCode))."
    }

    /// What the app (or its user) can do about a failure of this kind, when there is something.
    public var recoverySuggestion: String? { code.base.recoverySuggestion }

    /// Whether `text` contains `value` as a whole word: `"Article 7"` names `7`, `"t7.x"` does not.
    private static func text(_ text: String, names value: String) -> Bool {
        var rest = text[...]
        while let range = rest.range(of: value) {
            let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
            let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
            if !(before?.isLetterOrDigit ?? false), !(after?.isLetterOrDigit ?? false) { return true }
            rest = text[range.upperBound...]
        }
        return false
    }
}

private extension Character {
    var isLetterOrDigit: Bool { isLetter || isNumber }
}

extension StrataError: CustomNSError {
    /// The keys of the context Strata puts in ``errorUserInfo`` (`(error as NSError).userInfo`).
    public enum UserInfoKey {
        /// The file involved: Foundation's `NSFilePathErrorKey`.
        public static let path = NSFilePathErrorKey
        /// The entity involved.
        public static let entity = "entity"
        /// The attribute (or column) involved.
        public static let attribute = "attribute"
        /// The primary key of the object involved, as text.
        public static let objectID = "objectID"
        /// The SQL statement that failed.
        public static let sql = "sql"
        /// SQLite's primary result code (an `Int`).
        public static let sqliteCode = "sqliteCode"
        /// SQLite's extended result code (an `Int`).
        public static let extendedSQLiteCode = "extendedSQLiteCode"
        /// Why a snapshot was refused (a `String`: ``SnapshotRejection``'s description).
        public static let snapshotRejection = "snapshotRejection"
    }

    /// `"Strata"`: the domain of every bridged ``StrataError``.
    public static var errorDomain: String { "Strata" }

    /// The code's number in the `"Strata"` domain. Stable across versions: a number is never
    /// reused or changed, new codes get new numbers.
    public var errorCode: Int { code.base.number }

    /// The localized texts (`NSLocalizedDescriptionKey`, `NSLocalizedFailureReasonErrorKey`,
    /// `NSLocalizedRecoverySuggestionErrorKey`) and every context field that is set, under the
    /// keys of ``UserInfoKey``. Statement arguments are never included.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [:]
        info[NSLocalizedDescriptionKey] = errorDescription
        info[NSLocalizedFailureReasonErrorKey] = failureReason
        info[NSLocalizedRecoverySuggestionErrorKey] = recoverySuggestion
        info[UserInfoKey.path] = path
        info[UserInfoKey.entity] = entity
        info[UserInfoKey.attribute] = attribute
        info[UserInfoKey.objectID] = objectID
        info[UserInfoKey.sql] = sql
        info[UserInfoKey.sqliteCode] = sqliteCode.map { Int($0) }
        info[UserInfoKey.extendedSQLiteCode] = extendedSQLiteCode.map { Int($0) }
        info[UserInfoKey.snapshotRejection] = snapshotRejection?.description
        return info
    }
}

extension StrataError.Code.Base {
    /// The code's `NSError` number. Never renumber a code: apps and crash reports match on it.
    var number: Int {
        switch self {
        case .sqlite: 1
        case .busy: 2
        case .diskFull: 3
        case .ioError: 4
        case .constraint: 5
        case .notADatabase: 6
        case .cannotOpen: 7
        case .corrupt: 8
        case .newerSchema: 9
        case .migrationFailed: 10
        case .unsupportedAttribute: 11
        case .typeMismatch: 12
        case .unexpectedNull: 13
        case .missingColumn: 14
        case .unknownEntity: 15
        case .unknownAttribute: 16
        case .invalidValue: 17
        case .objectNotFound: 18
        case .conflict: 19
        case .invalidSnapshot: 20
        case .closed: 21
        case .misuse: 22
        case .interrupted: 23
        case .incompatibleSchema: 24
        case .fileReplaced: 25
        case .historyExpired: 26
        }
    }

    /// What a failure of this kind means, for ``StrataError/failureReason``.
    var explanation: String {
        switch self {
        case .sqlite: "SQLite reported an error."
        case .busy: "Another connection kept the database locked past the busy timeout."
        case .diskFull: "The disk, or the database's maximum size, is full."
        case .ioError: "The operating system reported an I/O error."
        case .constraint: "A UNIQUE, NOT NULL, CHECK or foreign-key constraint failed."
        case .notADatabase: "The file is not an SQLite database."
        case .cannotOpen: "The file could not be opened or created."
        case .corrupt: "The database file is corrupt."
        case .newerSchema: "The database was written by a newer version of the app or of Strata."
        case .migrationFailed: "A migration failed; the file was left as it was."
        case .unsupportedAttribute: "An entity declares an attribute whose type Strata cannot store."
        case .typeMismatch: "A stored value does not have the type its attribute declares."
        case .unexpectedNull: "A non-optional attribute holds NULL."
        case .missingColumn: "A column the entity needs is missing from its table."
        case .unknownEntity: "The entity was not registered with the store."
        case .unknownAttribute: "The entity has no attribute of that name."
        case .invalidValue: "The value cannot be stored or compared."
        case .objectNotFound: "The object is not in the store."
        case .conflict: "Unsaved edits conflict with a change saved elsewhere."
        case .invalidSnapshot: "The snapshot file is missing, damaged or belongs to another store."
        case .closed: "The store was closed."
        case .misuse: "The API was used in a way it does not allow."
        case .interrupted: "The operation was interrupted."
        case .incompatibleSchema: "The entities changed in a way that would lose or hide stored values; the file was left as it was."
        case .fileReplaced: "The database file was replaced or removed while the store had it open."
        case .historyExpired: "The store's history was pruned past the point asked about."
        }
    }

    /// What can be done about a failure of this kind, when there is something to suggest.
    var recoverySuggestion: String? {
        switch self {
        case .busy: "Try again later; pending saves are retried automatically."
        case .diskFull: "Free some disk space; pending saves are retried automatically."
        case .ioError: "Check the storage device; pending saves are retried automatically."
        case .cannotOpen: "Check that the directory exists and that the app may write to it."
        case .notADatabase, .corrupt: "Restore the file from a backup, or delete it to start with an empty store."
        case .newerSchema: "Update the app to a version that knows this database."
        case .migrationFailed: "Fix the migration and open the store again."
        case .unknownEntity: "Pass the entity type to Store.open(at:entities:) or Store.openWarm."
        case .unknownAttribute: "Use the name of one of the entity's coding keys."
        case .objectNotFound: "Insert or upsert the object instead of updating it."
        case .conflict: "Roll back the edits and apply them again to the saved objects, or choose another merge policy."
        case .invalidSnapshot: "Delete the snapshot; the store opens from SQLite and a new snapshot can be written."
        case .closed: "Open the store again."
        case .missingColumn: "Map the attribute to its column with Entity.columnNames, or add a migration that creates the column."
        case .incompatibleSchema: "Declare the attribute's former name, a default or that its values may go, or add a named migration that converts them."
        case .fileReplaced: "Close the store and open it again; save again what it reported as not persisted."
        case .historyExpired: "Read everything again, then continue from the current token; register a history consumer to keep its history from being pruned."
        case .sqlite, .constraint, .unsupportedAttribute, .typeMismatch, .unexpectedNull, .invalidValue,
             .misuse, .interrupted: nil
        }
    }
}
