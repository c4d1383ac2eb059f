import Dispatch

/// A value that may only be used on one serial queue.
///
/// `@unchecked Sendable` is safe because the value is private and `run` is its only accessor;
/// `run` checks with `dispatchPrecondition` that the caller is on `queue`, which is serial, so
/// there is never more than one thread touching the value at a time.
final class QueueConfined<Value>: @unchecked Sendable {
    private let value: Value
    let queue: DispatchQueue

    init(_ value: Value, queue: DispatchQueue) {
        self.value = value
        self.queue = queue
    }

    func run<Result>(_ body: (Value) throws -> Result) rethrows -> Result {
        dispatchPrecondition(condition: .onQueue(queue))
        return try body(value)
    }
}
