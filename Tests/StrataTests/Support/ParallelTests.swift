import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `Parallel.run` runs every job once, returns the results in the jobs' order, and throws the
/// first error in that order (whichever job failed first in time) after every job has run.
@Suite struct ParallelTests {
    private struct Failure: Error, Equatable { let job: Int }

    @Test(arguments: [0, 1, 2, 7, 64])
    func resultsComeInTheJobsOrderAndEveryJobRunsOnce(count: Int) throws {
        var (random, seed) = SeededRandom.forTest("resultsComeInTheJobsOrderAndEveryJobRunsOnce \(count)")
        let runs = Locked([Int](repeating: 0, count: count))
        // Uneven work, so that jobs finish out of order.
        let work = (0..<count).map { _ in random.next(20_000) }
        let jobs: [@Sendable () throws -> Int] = (0..<count).map { job in
            { [work] in
                var sum = 0
                for step in 0..<work[job] { sum &+= step }
                runs.withLock { $0[job] += 1 }
                return job * 1_000 + (sum & 0)
            }
        }
        #expect(try Parallel.run(jobs) == (0..<count).map { $0 * 1_000 }, "seed \(seed)")
        #expect(runs.withLock { $0 } == [Int](repeating: 1, count: count), "seed \(seed): each job once")
    }

    @Test func theFirstFailureInTheJobsOrderIsThrownAfterEveryJobRan() {
        let runs = Locked(0)
        let jobs: [@Sendable () throws -> Int] = (0..<9).map { job in
            {
                runs.withLock { $0 += 1 }
                if job == 3 || job == 6 { throw Failure(job: job) }
                return job
            }
        }
        #expect(throws: Failure(job: 3)) { try Parallel.run(jobs) }
        #expect(runs.withLock { $0 } == 9)
    }

    /// `forEach` hands each index out once, to thread numbers below the count asked for; once a
    /// piece returns false no index is handed out any more, and every index below it has run.
    /// (How many the other thread takes while the stopping piece runs is up to the scheduler.)
    @Test func forEachStopsHandingOutAfterAFalseAndEveryEarlierIndexRan() {
        let ran = Locked([Int: Int]())   // index → times run
        let threads = Locked(Set<Int>())
        Parallel.forEach(200, threads: 2) { thread, index in
            ran.withLock { $0[index, default: 0] += 1 }
            threads.withLock { _ = $0.insert(thread) }
            return index != 120
        }
        let counts = ran.withLock { $0 }
        #expect((0...120).allSatisfy { counts[$0] == 1 }, "every index up to the stop, once")
        #expect(counts.values.allSatisfy { $0 == 1 })
        #expect(threads.withLock { $0 }.isSubset(of: [0, 1]))
    }
}
