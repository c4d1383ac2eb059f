import Foundation

/// The one error type Strata throws.
///
/// Every error says what failed and where: the ``code`` for matching, a human ``message``, and
/// whatever context applies — the file, entity, attribute, object ID, the SQL and SQLite's result
/// codes. Statement arguments are redacted unless
/// ``StoreConfiguration/publicStatementArguments`` is on, because they may hold user data.
///
/// ```swift
/// do { try await store.persist() }
/// catch let error as StrataError where error.code == .diskFull { showDiskFullAlert() }
/// ```
public struct StrataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        // Internal (not private) so that `StrataError+Bridging.swift` can switch over it
        // exhaustively: a new code cannot be added without its NSError number and texts.
        enum Base: String, Hashable, Sendable, CaseIterable {
            case sqlite, busy, diskFull, ioError, constraint, notADatabase, cannotOpen, corrupt
            case newerSchema, migrationFailed, unsupportedAttribute, typeMismatch, unexpectedNull
            case missingColumn, unknownEntity, unknownAttribute, invalidValue, objectNotFound
            case conflict, invalidSnapshot, closed, misuse, interrupted, incompatibleSchema
            case fileReplaced
            case historyExpired
        }
        let base: Base
        private init(_ base: Base) { self.base = base }

        /// Any other SQLite failure; see ``StrataError/sqliteCode``.
        public static let sqlite = Code(.sqlite)
        /// The database stayed locked by another connection past the busy timeout. Transient.
        public static let busy = Code(.busy)
        /// The disk (or `max_page_count`) is full. Transient: retried once space is freed.
        public static let diskFull = Code(.diskFull)
        /// The operating system reported an I/O error. Transient.
        public static let ioError = Code(.ioError)
        /// A UNIQUE, NOT NULL, CHECK or foreign-key constraint failed. Permanent.
        public static let constraint = Code(.constraint)
        /// The file exists but is not an SQLite database.
        public static let notADatabase = Code(.notADatabase)
        /// The file cannot be opened or created (missing directory, permissions).
        public static let cannotOpen = Code(.cannotOpen)
        /// The database file is corrupt.
        public static let corrupt = Code(.corrupt)
        /// The database was written by a newer schema than this app declares.
        public static let newerSchema = Code(.newerSchema)
        /// A migration failed; the file was left as it was.
        public static let migrationFailed = Code(.migrationFailed)
        /// An entity declares an attribute whose type Strata cannot store.
        public static let unsupportedAttribute = Code(.unsupportedAttribute)
        /// A stored value does not have the type its attribute declares.
        public static let typeMismatch = Code(.typeMismatch)
        /// A non-optional attribute holds NULL.
        public static let unexpectedNull = Code(.unexpectedNull)
        /// A column the entity needs is missing from the table.
        public static let missingColumn = Code(.missingColumn)
        /// The entity was not registered with the store.
        public static let unknownEntity = Code(.unknownEntity)
        /// A query or update names an attribute the entity does not have.
        public static let unknownAttribute = Code(.unknownAttribute)
        /// A value cannot be stored or compared (NaN, an out-of-range integer, a mistyped filter value).
        public static let invalidValue = Code(.invalidValue)
        /// An update names an object that is not in the store.
        public static let objectNotFound = Code(.objectNotFound)
        /// Unsaved edits conflict with a change saved elsewhere.
        public static let conflict = Code(.conflict)
        /// A snapshot file is missing, truncated, corrupt or does not belong to this store.
        public static let invalidSnapshot = Code(.invalidSnapshot)
        /// The store was closed.
        public static let closed = Code(.closed)
        /// The API was used in a way it does not allow (for example re-entrantly).
        public static let misuse = Code(.misuse)
        /// The operation was interrupted (cancelled).
        public static let interrupted = Code(.interrupted)
        /// The declared entities differ from the stored schema in a way that would lose or hide
        /// stored values (a type change, a removed attribute holding values, a new required
        /// attribute without a default, a changed primary key). The store was not opened and
        /// the file not changed; the message names the entity, the attribute, both forms and
        /// the way out.
        public static let incompatibleSchema = Code(.incompatibleSchema)
        /// The database file at the store's path was replaced or removed while the store had it
        /// open (restored from a backup, moved away, deleted): what it would commit or read would
        /// go to the file it opened, which the path no longer names. Accepted changes stay
        /// pending; close the store and open it again.
        public static let fileReplaced = Code(.fileReplaced)
        /// The history no longer reaches back to the token asked about: it was pruned past it.
        /// The error's `oldestAvailableToken` says where it starts; read everything again.
        public static let historyExpired = Code(.historyExpired)

        /// The code's name, as written after `.` in Swift (`"constraint"`, `"diskFull"`).
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened, in words.
    public var message: String
    /// The file involved, if any.
    public var path: String?
    /// The entity involved, if any.
    public var entity: String?
    /// The attribute (or column) involved, if any.
    public var attribute: String?
    /// The primary key of the object involved, if any, as text.
    public var objectID: String?
    /// The SQL statement that failed, if any.
    public var sql: String?
    /// The statement arguments, or `nil` when redacted or not applicable.
    public var arguments: [DatabaseValue]?
    /// SQLite's primary result code, if the failure came from SQLite.
    public var sqliteCode: Int32?
    /// SQLite's extended result code, if the failure came from SQLite.
    public var extendedSQLiteCode: Int32?
    /// For ``Code/historyExpired``: the generation the history starts after (History/'s
    /// `oldestAvailableToken`).
    var historyFloor: Int64?
    /// Why a snapshot was refused, when this error is about one (code ``Code/invalidSnapshot``):
    /// its kind, for matching; ``message`` says what was found and where.
    ///
    /// ```swift
    /// do { _ = try Snapshot.verify(at: path) }
    /// catch let error as StrataError where error.snapshotRejection == .checksumMismatch { … }
    /// ```
    public var snapshotRejection: SnapshotRejection?

    /// Creates an error; Strata's own errors fill in every context field that applies.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: What happened, in words (a sentence fragment: "cannot update Article 42: …").
    ///   - path: The file involved.
    ///   - entity: The entity involved.
    ///   - attribute: The attribute (or column) involved.
    ///   - objectID: The primary key of the object involved, as text.
    ///   - sql: The SQL statement that failed.
    public init(
        _ code: Code, _ message: String, path: String? = nil, entity: String? = nil,
        attribute: String? = nil, objectID: String? = nil, sql: String? = nil
    ) {
        self.code = code
        self.message = message
        self.path = path
        self.entity = entity
        self.attribute = attribute
        self.objectID = objectID
        self.sql = sql
    }

    /// Whether retrying the same work later may succeed (busy, disk full, I/O error, interrupted).
    public var isTransient: Bool {
        code == .busy || code == .diskFull || code == .ioError || code == .interrupted
    }

    /// The code, the message and every context field, for logs and debugging:
    /// `constraint: UNIQUE constraint failed: articles.url [entity Article] [id 42] [file …] [SQLite 19/2067] [SQL: …]`.
    /// ``localizedDescription`` is the shorter text for people (see `StrataError+Bridging.swift`).
    public var description: String {
        var text = "\(code): \(message)"
        for (label, value) in location { text += " [\(label) \(value)]" }
        if let sqliteCode { text += " [SQLite \(sqliteCode)/\(extendedSQLiteCode ?? sqliteCode)]" }
        if let sql { text += " [SQL: \(sql)]" }
        if let arguments { text += " [arguments: \(arguments)]" }
        return text
    }

    /// Where the failure happened — the entity, attribute, object and file it names — as
    /// `(label, value)` pairs, most specific first. One rendering of the context for
    /// ``description`` and ``errorDescription``.
    var location: [(label: String, value: String)] {
        var pairs: [(label: String, value: String)] = []
        if let entity { pairs.append(("entity", entity)) }
        if let attribute { pairs.append(("attribute", attribute)) }
        if let objectID { pairs.append(("id", objectID)) }
        if let path { pairs.append(("file", path)) }
        return pairs
    }

    func with(entity: String? = nil, attribute: String? = nil, objectID: String? = nil, path: String? = nil) -> StrataError {
        var copy = self
        if copy.path == nil { copy.path = path }
        if copy.entity == nil { copy.entity = entity }
        if copy.attribute == nil { copy.attribute = attribute }
        if copy.objectID == nil { copy.objectID = objectID }
        return copy
    }
}
