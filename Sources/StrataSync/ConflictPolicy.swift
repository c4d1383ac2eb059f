import Strata

/// How a ``SyncEngine`` settles a pulled change to an attribute that this device also changed
/// and has not pushed yet. Conflicts are per attribute of an object: edits of different
/// attributes never conflict, and a deletion wins over every edit, whatever the policy.
///
/// ```swift
/// let engine = SyncEngine(store: store, transport: transport, entities: [Article.self],
///                         policy: .custom { conflict in
///                             conflict.attribute == "isRead" ? conflict.localValue : conflict.serverValue
///                         })
/// ```
public enum ConflictPolicy: Sendable {
    /// The later write wins, by hybrid logical time and then device ID: the protocol's order,
    /// the one the server keeps. A losing local edit is dropped; a winning one stays to be pushed.
    case lastWriterWins
    /// The server's value is applied and the local edit dropped.
    case serverWins
    /// The local value stays, and is pushed with a time after the server's, so that it wins there too.
    case deviceWins
    /// The closure decides the value to keep. If it is the server's, the local edit is dropped;
    /// otherwise the value is stored and pushed with a time after the server's.
    case custom(@Sendable (SyncConflict) -> DatabaseValue)

    /// ``lastWriterWins``.
    public static let `default` = ConflictPolicy.lastWriterWins
}

/// One attribute of one object that a pull changes while this device has an unpushed edit of it.
public struct SyncConflict: Sendable, Hashable {
    /// The entity's name.
    public let entity: String
    /// The object's primary key, as stored.
    public let id: DatabaseValue
    /// The attribute's name.
    public let attribute: String
    /// The value this device holds (nil when the object is not stored here).
    public let localValue: DatabaseValue?
    /// The value the server sent.
    public let serverValue: DatabaseValue
    /// The local edit's time (hybrid logical, milliseconds).
    public let localTime: Int64
    /// The server's write's time and device.
    public let serverTime: Int64
    /// The device that wrote the server's value.
    public let serverDevice: String
}

/// What a conflict came to.
public enum SyncConflictOutcome: Sendable, Hashable {
    /// The server's value was applied; the local edit is not pushed.
    case serverValueKept
    /// The local value stays and is pushed to win on the server.
    case localValueKept
    /// The custom resolver's value is stored and pushed.
    case resolvedValueKept
}
