import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A batch of numbers; the test's stand-in for a `CellBatch`.
private final class Numbers: @unchecked Sendable {
    // @unchecked: used by one thread at a time, handed over through the HandOff under test.
    var values: [Int] = []
}

/// `HandOff` consumes every batch passed, in the order passed, on a thread of its own, with a
/// bounded set of batches going round; a failure of the consumer reaches the filler and stops
/// the consuming, and neither finishing nor cancelling returns before the consumer has stopped.
@Suite struct HandOffTests {
    private struct Failure: Error, Equatable { let batch: Int }

    @Test func batchesAreConsumedInTheOrderPassedWithTheSameFewBatchesGoingRound() throws {
        var (random, seed) = SeededRandom.forTest(#function)
        let seen = Locked(Set<ObjectIdentifier>())
        let handOff = HandOff<Numbers, [Int]>(state: [], spares: [Numbers(), Numbers()]) { consumed, batch in
            seen.withLock { _ = $0.insert(ObjectIdentifier(batch)) }
            consumed += batch.values
            batch.values.removeAll()
        }
        var batch = Numbers()
        var passed: [Int] = []
        for number in 0..<(500 + random.next(500)) {
            batch.values.append(number)
            passed.append(number)
            if random.next(7) == 0 {
                batch = try handOff.pass(batch)
                #expect(batch.values.isEmpty, "seed \(seed): a batch handed back holds what it held")
            }
        }
        #expect(try handOff.finish(batch) == passed, "seed \(seed)")
        #expect(seen.withLock { $0.count } <= 3, "seed \(seed): the filling batch and the two spares, no more")
    }

    @Test func aConsumerFailureReachesTheFillerAndNothingAfterItIsConsumed() {
        let consumed = Locked([Int]())
        let handOff = HandOff<Numbers, Int>(state: 0, spares: [Numbers()]) { _, batch in
            let number = batch.values[0]
            if number == 5 { throw Failure(batch: number) }
            consumed.withLock { $0.append(number) }
            batch.values.removeAll()
        }
        var batch = Numbers()
        var thrown: (any Error)?
        do {
            for number in 0..<50 {
                batch.values = [number]
                batch = try handOff.pass(batch)
            }
            _ = try handOff.finish(batch)
        } catch {
            thrown = error
            handOff.cancel()
        }
        #expect(thrown as? Failure == Failure(batch: 5))
        #expect(consumed.withLock { $0 } == [0, 1, 2, 3, 4])
    }

    @Test func aFailureInTheLastBatchIsThrownByFinish() {
        let handOff = HandOff<Numbers, Int>(state: 0, spares: [Numbers()]) { _, batch in
            if batch.values == [-1] { throw Failure(batch: -1) }
            batch.values.removeAll()
        }
        let batch = Numbers()
        batch.values = [-1]
        #expect(throws: Failure(batch: -1)) { _ = try handOff.finish(batch) }
    }

    @Test func cancellingStopsTheConsumerWhetherIdleOrWithBatchesQueued() throws {
        // Idle: the consumer waits for a batch, and cancelling wakes it to stop.
        let idle = HandOff<Numbers, Int>(state: 0, spares: [Numbers()]) { _, _ in }
        idle.cancel()
        // With batches passed: what was consumed is a prefix of them, in order.
        let consumed = Locked([Int]())
        let busy = HandOff<Numbers, Int>(state: 0, spares: [Numbers(), Numbers()]) { _, batch in
            consumed.withLock { $0 += batch.values }
            batch.values.removeAll()
        }
        var batch = Numbers()
        for number in 0..<20 {
            batch.values = [number]
            batch = try busy.pass(batch)
        }
        busy.cancel()
        let prefix = consumed.withLock { $0 }
        #expect(prefix == Array(0..<prefix.count))
    }
}
