import Strata
import StrataSyncWire

/// The object the end-to-end tests' devices edit: integer keys, one attribute of each kind the
/// tests compare exactly (text, a Bool sent as an integer, an integer).
struct Note: Entity, Equatable {
    var id: Int64
    var title: String
    var isRead: Bool
    var score: Int64

    /// The attributes as the server's records hold them.
    var syncValues: [String: SyncValue] {
        ["title": .text(title), "isRead": .integer(isRead ? 1 : 0), "score": .integer(score)]
    }
}
