/// What ``StoreInspector/vacuum(at:)`` did.
public struct VacuumReport: Sendable, Hashable {
    /// The database file plus its WAL before, in bytes.
    public let bytesBefore: Int64
    /// The database file plus its WAL after, in bytes.
    public let bytesAfter: Int64
    /// WAL frames copied into the database file before the rebuild (`PASSIVE` checkpoint): what
    /// an app that did not close cleanly left in the WAL; 0 after a clean close.
    public let checkpointedFrames: Int
    /// Pages before (the WAL's included).
    public let pagesBefore: Int
    /// Pages on the freelist before.
    public let freePagesBefore: Int
    /// Pages after.
    public let pagesAfter: Int

    /// What the checkpoint and `VACUUM` gave back to the file system (negative if the files grew).
    public var bytesReclaimed: Int64 { bytesBefore - bytesAfter }
}
