/// A failure of the service itself (configuration, database), as opposed to a refused request.
public struct SyncServerError: Error, Sendable, CustomStringConvertible {
    /// What failed and where.
    public let description: String

    init(_ description: String) { self.description = description }
}
