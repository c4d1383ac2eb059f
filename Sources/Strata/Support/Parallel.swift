import Foundation

/// Work spread over every core, each thread taking the next piece not yet taken.
///
/// The calling thread takes part, so no piece waits for a thread to be woken, and a long piece
/// or a thread the scheduler holds back does not hold the others at the join. The other threads
/// are started for the call (a `Thread` each), not taken from libdispatch's pool or the
/// cooperative pool: in a fresh process those pools start their second thread lazily, so a
/// warm start's load — the work a launch waits for — may run on one core while the other is
/// idle. Blocks the caller until every piece has run: call it from a detached task or a thread
/// of its own, never from the main actor.
enum Parallel {
    /// Calls `body` once for each index below `count`, in increasing order of taking, on up to
    /// `threads` threads at once (fewer when there are fewer indexes), with the number of the
    /// thread taking it (below `threads`, so that each may keep scratch memory of its own). When
    /// `body` returns false no index is handed out any more; those already taken still finish,
    /// so every index below the one that stopped has run.
    static func forEach(_ count: Int, threads: Int, _ body: @escaping @Sendable (_ thread: Int, _ index: Int) -> Bool) {
        let width = min(count, max(1, threads))
        guard width > 0 else { return }
        let next = Locked(0)
        let work: @Sendable (Int) -> Void = { thread in
            while true {
                let index = next.withLock { taken in
                    defer { taken += 1 }
                    return taken
                }
                guard index < count else { return }
                guard body(thread, index) else {
                    next.withLock { $0 = count }
                    return
                }
            }
        }
        let done = DispatchSemaphore(value: 0)
        for thread in 1..<width {
            let helper = Thread {
                work(thread)
                done.signal()
            }
            helper.name = "strata.parallel"
            helper.start()
        }
        work(0)
        for _ in 1..<width { done.wait() }
    }

    /// One thread per core.
    static var cores: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    /// Runs `jobs` and returns their results, in order; throws the first error in the jobs'
    /// order, after every job has run.
    static func run<T: Sendable>(_ jobs: [@Sendable () throws -> T]) throws -> [T] {
        guard jobs.count > 1 else { return try jobs.map { try $0() } }
        let results = Locked([Result<T, any Error>?](repeating: nil, count: jobs.count))
        forEach(jobs.count, threads: cores) { _, index in
            let result = Result { try jobs[index]() }
            results.withLock { $0[index] = result }
            return true
        }
        // Every index below jobs.count was taken and its result stored before forEach returned.
        return try results.withLock { $0 }.map { try $0!.get() }
    }
}
