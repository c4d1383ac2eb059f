@testable import Strata

extension Result where Failure == StrataError {
    /// Why a snapshot (or a frame of one) was refused — the failure's
    /// ``StrataError/snapshotRejection`` — or nil when it was not.
    var rejection: SnapshotRejection? {
        if case .failure(let error) = self { return error.snapshotRejection }
        return nil
    }
}
