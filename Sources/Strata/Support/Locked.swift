import Foundation

/// A value guarded by a lock: the only way to reach it is `withLock`.
///
/// `@unchecked Sendable` is safe because `value` is private and every read or write of it happens
/// inside `withLock`, which holds `lock` for the whole access. The closures passed in are
/// Strata's own bookkeeping; no user code runs while the lock is held.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
