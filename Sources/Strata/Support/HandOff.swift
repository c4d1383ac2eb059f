import Foundation

/// Batches filled on the calling thread and consumed, in the order filled, on a thread of its
/// own, the two working at once: a large fetch steps its statement on the store's queue while
/// the rows before are appended to the block being built (``CellBatch``). A fixed set of
/// batches goes round — filled, consumed, emptied, filled again — so memory stays bounded and
/// warm however many rows go through.
///
/// The filling thread calls ``pass(_:)`` for each full batch, then ``finish(_:)`` with the last
/// one (or ``cancel()`` when it gives up): each returns only once the consuming thread has
/// stopped, so the thread never outlives the call that started it. A thread of its own, not a
/// pool's: the filler waits for the consumer, which must therefore run whatever else the pool is
/// busy with.
///
/// `@unchecked Sendable`, and safe: everything below is read and written under `condition`'s
/// lock, except `state`, which only the consuming thread touches until it has set `consumerDone`
/// (under the lock), and only the filling thread after it has seen it set; and a batch, which
/// one side holds at a time: the filler gives it up in ``pass(_:)`` and gets it back from
/// `spare`, where the consumer puts it when done with it. The lock orders each side's writes
/// before the other's reads.
final class HandOff<Batch, State>: @unchecked Sendable {
    private let condition = NSCondition()
    /// Filled batches, in the order filled, waiting for the consumer.
    private var queued: [Batch] = []
    /// Consumed batches, emptied, waiting for the filler.
    private var spare: [Batch]
    /// Whether the filler may still pass batches.
    private var filling = true
    /// Whether the consumer is to take no more batches: it failed, or the filler gave up.
    private var stopped = false
    private var failure: (any Error)?
    private var consumerDone = false
    private var state: State
    private let consume: @Sendable (inout State, Batch) throws -> Void

    /// Starts a consuming thread that calls `consume` with `state` and each batch passed, in
    /// order (`consume` leaves the batch ready to fill again), then makes the batch spare;
    /// `spares` are the batches to fill besides the one the caller is filling.
    init(state: State, spares: [Batch], consume: @escaping @Sendable (inout State, Batch) throws -> Void) {
        precondition(!spares.isEmpty, "a hand-off needs a batch to fill while another is consumed")
        self.state = state
        self.spare = spares
        self.consume = consume
        let thread = Thread { [self] in run() }
        thread.name = "strata.hand-off"
        thread.start()
    }

    // MARK: The filling thread

    /// Gives `filled` to the consumer and returns a batch to fill, waiting for one to be spare.
    /// - Throws: the error `consume` threw, after which nothing more is consumed (call
    ///   ``cancel()`` to wait for the consumer to stop).
    func pass(_ filled: Batch) throws -> Batch {
        condition.lock()
        defer { condition.unlock() }
        precondition(filling, "a batch passed after the hand-off finished")
        queued.append(filled)
        condition.broadcast()
        while spare.isEmpty && !stopped { condition.wait() }
        if let failure { throw failure }
        return spare.removeLast()
    }

    /// Gives `last` to the consumer, waits for it to consume every batch, and returns the state
    /// it left.
    /// - Throws: the error `consume` threw (no batch after the one that threw was consumed).
    func finish(_ last: Batch) throws -> State {
        condition.lock()
        queued.append(last)
        filling = false
        condition.broadcast()
        while !consumerDone { condition.wait() }
        condition.unlock()
        if let failure { throw failure }
        return state
    }

    /// Stops the consumer after the batch it is consuming, if any, and waits for it to stop.
    func cancel() {
        condition.lock()
        filling = false
        stopped = true
        condition.broadcast()
        while !consumerDone { condition.wait() }
        condition.unlock()
    }

    // MARK: The consuming thread

    private func run() {
        while let batch = next() {
            do {
                try consume(&state, batch)
            } catch {
                condition.lock()
                failure = error
                stopped = true
                condition.broadcast()
                condition.unlock()
                break
            }
            condition.lock()
            spare.append(batch)
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        consumerDone = true
        condition.broadcast()
        condition.unlock()
    }

    /// The next filled batch, waiting for one; nil once stopped or finished with none left.
    private func next() -> Batch? {
        condition.lock()
        defer { condition.unlock() }
        while queued.isEmpty && filling && !stopped { condition.wait() }
        if stopped || queued.isEmpty { return nil }
        return queued.removeFirst()
    }
}
