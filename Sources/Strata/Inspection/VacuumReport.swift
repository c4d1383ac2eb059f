/// What ``StoreInspector/vacuum(at:)`` did.
public struct VacuumReport: Sendable, Hashable {
    /// The database file plus its WAL before, in bytes.
    public let bytesBefore: Int64
    /// The database file plus its WAL after, in bytes.
    public let bytesAfter: Int64
    /// Frames the first checkpoint copied from the WAL into the database file.
    public let checkpointedFrames: Int
    /// Pages before (the WAL's included) and on the freelist before.
    public let pagesBefore: Int
    public let freePagesBefore: Int
    /// Pages after.
    public let pagesAfter: Int

    /// What the checkpoint and `VACUUM` gave back to the file system (negative if the files grew).
    public var bytesReclaimed: Int64 { bytesBefore - bytesAfter }
}
