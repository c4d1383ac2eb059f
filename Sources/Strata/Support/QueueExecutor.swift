import Dispatch

/// A serial executor that runs an actor's jobs on a dispatch queue of its own rather than on
/// Swift's global concurrent pool (``WorkerContext``'s executor).
///
/// Sendable without `@unchecked`: its one stored property, the queue, is thread-safe, and the
/// queue being serial is what makes it a serial executor — one job at a time, in order.
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
