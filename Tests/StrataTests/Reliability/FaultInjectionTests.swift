import CFaultVFS
import Foundation
@testable import Strata
import StrataTestSupport
import Testing

// Reliability: I/O faults injected under SQLite (a VFS shim, Tests/CFaultVFS), two processes
// writing one file, and WAL growth under a long-lived reader.
//
// Promises proven here:
// - "A failed write (I/O error, disk full, busy) is reported, never silent, leaves the in-memory
//   state and the pending changes intact, and succeeds on retry."
// - "No raw SQLITE_BUSY reaches a caller when two processes share the file."
//
// How a fault is injected: each point opens a fresh copy of a committed baseline through the
// "strata-fault" VFS, arms "fail the Nth read/write/fsync (of one class of file)", once or
// persistently, with SQLITE_IOERR_* or SQLITE_FULL, and submits one save. When the store's retry
// begins (its next BEGIN), the VFS stops injecting and holds instead — every write and fsync
// fails with the same code, reads succeed — so the retry cannot commit while the test checks
// what the fault left (pending, visible, not in the file); disarming ends the hold and the
// automatic retry commits. A persistent fault therefore persists through the failed attempt;
// from the retry on, the hold keeps failing the store's writes the same way.
//
// The fault VFS keeps process-wide state, so the suite is serialized. Other suites are not
// affected: only files opened through the "strata-fault" VFS (in the current epoch) are
// counted or failed.

// MARK: - Tests

@Suite(.serialized) struct FaultInjectionTests {
    // MARK: I/O faults during one save

    @Test func everyWriteSyncAndSampledReadFaultOfASaveIsReportedKeptAndRetried() async throws {
        let start = ContinuousClock.now
        var report: [String] = []
        var absorbed: [String: [Int64]] = [:]
        var failedPoints = 0
        var swept = 0
        let injectedBefore = strata_fault_total_injected()

        /// Three ways one save meets the disk: synchronous=NORMAL (no fsync on commit),
        /// synchronous=FULL (an fsync per commit), and NORMAL with a checkpoint run by the save's
        /// own commit (database writes and fsyncs once the commit is in the WAL).
        let setups: [(name: String, synchronous: StoreConfiguration.Synchronous, autocheckpoint: Int?)] = [
            ("normal", .normal, nil), ("full", .full, nil), ("normal+checkpoint", .normal, 10),
        ]
        for setup in setups {
            let fixture = try await FaultFixture(synchronous: setup.synchronous, autocheckpoint: setup.autocheckpoint)
            let counts = try await fixture.measureSave()
            // The sweep is only meaningful if the same save makes the same calls every time.
            let again = try await fixture.measureSave()
            #expect(counts == again, "\(setup.name): I/O of one save is not deterministic: \(counts) vs \(again)")
            report.append("\(setup.name): one save of \(batchArticles.count) articles made \(counts)")
            try #require(counts.count(.write, in: .wal) > 0)

            var points: [FaultPoint] = []
            func add(_ kind: FaultKind, in file: FaultFile, _ positions: [Int64]) {
                for n in positions {
                    for persistent in [false, true] {
                        for code in [kind.ioErrorCode, sqliteFull] {
                            points.append(FaultPoint(kind: kind, file: file, n: n, persistent: persistent, code: code))
                        }
                    }
                }
            }
            /// Every call when there are at most `all`, else the first and last three and about `sample` between.
            func every(_ count: Int64, all: Int64 = 64, sample: Int64) -> [Int64] {
                guard count > all else { return Array(stride(from: 1, through: count, by: 1)) }
                let step = Int(max(1, count / sample))
                return positions([1, 2, 3, count - 2, count - 1, count] + Array(stride(from: 1, through: count, by: step)), upTo: count)
            }
            switch setup.name {
            case "normal":
                // Every read, every write to the database and the WAL, every fsync. Statement
                // journals stay in memory (`temp_store = MEMORY`): no temporary file is written.
                try #require(counts.count(.write, in: .statementJournal) == 0, "a statement journal spilled to a file")
                add(.read, in: .any, every(counts.count(.read), sample: 16))
                for file in [FaultFile.database, .wal, .other] { add(.write, in: file, every(counts.count(.write, in: file), sample: 16)) }
                add(.sync, in: .any, every(counts.count(.sync), sample: 16))
            case "full":
                // FULL adds the commit's fsync; its writes are the ones the NORMAL sweep covered.
                try #require(counts.count(.sync) > 0, "synchronous=FULL must fsync on commit")
                add(.sync, in: .any, every(counts.count(.sync), sample: 16))
                let walWrites = counts.count(.write, in: .wal)
                add(.write, in: .wal, positions([1, walWrites / 2, walWrites], upTo: walWrites))
            default:
                // The checkpoint: its reads of the WAL, its writes to the database, every fsync.
                try #require(counts.count(.write, in: .database) > 0, "the save's commit did not checkpoint")
                let walReads = counts.count(.read, in: .wal), databaseWrites = counts.count(.write, in: .database)
                add(.read, in: .wal, positions([1, walReads / 2, walReads], upTo: walReads))
                add(.write, in: .database, positions([1, databaseWrites / 2, databaseWrites], upTo: databaseWrites))
                add(.sync, in: .any, every(counts.count(.sync), sample: 16))
            }

            for point in points {
                switch try await runFault(point, fixture: fixture, setup: setup.name) {
                case .absorbed:
                    absorbed["\(setup.name): \(point.kind) of \(point.file) \(point.persistent ? "persistent" : "once") "
                             + codeName(point.code), default: []].append(point.n)
                case .failed: failedPoints += 1
                }
            }
            swept += points.count
            report.append("\(setup.name): \(points.count) faults swept")
        }
        let injected = strata_fault_total_injected() - injectedBefore
        report.append("faults injected: \(injected) at \(swept) points; saves that failed, were reported and recovered: "
                      + "\(failedPoints); points SQLite absorbed (the save succeeded): \(swept - failedPoints)")
        for (group, positions) in absorbed.sorted(by: { $0.key < $1.key }) {
            report.append("absorbed: \(group) at #\(positions.map(String.init).joined(separator: ","))")
        }
        report.append("sweep took \(ContinuousClock.now - start)")
        print("[FaultInjection] " + report.joined(separator: "\n[FaultInjection] "))
        #expect(injected >= Int64(swept), "every point must inject at least one fault")
        #expect(failedPoints > 0)
    }

    private enum Outcome { case failed, absorbed }

    /// Injects one fault into a save on a fresh copy of the fixture and checks the promise.
    private func runFault(_ point: FaultPoint, fixture: FaultFixture, setup: String) async throws -> Outcome {
        let context = "\(setup), \(point)"
        let hold = HoldOnRetry(code: point.code)
        strata_fault_disarm()
        let path = try fixture.freshCopy()
        defer { fixture.remove(path) }
        let store = try await fixture.open(path, hold: hold)
        let failures = store.failures()
        strata_fault_arm_in(point.kind.raw, point.file.rawValue, point.n, point.persistent ? 1 : 0, point.code)
        defer { strata_fault_disarm() }
        let submission = try store.submit(changeSet(batchArticles))

        // Both waiters — persist() and the submitter's committed() — learn the attempt's outcome.
        async let persisted = outcome { try await store.persist() }
        async let own = outcome { try await submission.committed() }
        let (result, ownResult) = await (persisted, own)
        let injected = strata_fault_injected()
        #expect(injected > 0, "\(context): the fault never fired")

        switch result {
        case .success:
            // SQLite absorbed the fault: the first attempt committed (a retry could not have — the
            // VFS holds writes from the retry's BEGIN on). The save must really be in the file.
            strata_fault_disarm()
            if case .failure(let error) = ownResult { Issue.record("\(context): committed() threw \(error) although persist() succeeded") }
            try await submission.committed()
            try await verifyCommitted(store, path: store.path, context: context + " (absorbed)")
            return .absorbed

        case .failure(let error):
            // Reported, typed, transient.
            // Stop injecting now (a persistent read fault would fail the fetches below) and
            // hold writes until the test is done looking; the observer did it already if the
            // retry began.
            _ = strata_fault_hold_if_injected(point.code)
            let strataError = try #require(error as? StrataError, "\(context): not a StrataError: \(error)")
            #expect(strataError.code == point.expectedError, "\(context): \(strataError)")
            #expect(strataError.isTransient, "\(context): \(strataError)")
            // Published on failures().
            let published = await next(failures, within: 10)
            #expect(published?.code == strataError.code, "\(context): failures() published \(String(describing: published))")
            // Pending and visible (read-your-writes); nothing of it reached the file. The retry
            // cannot commit meanwhile: the VFS holds writes from its first BEGIN on.
            #expect(store.pendingCount == 1, "\(context): the change set is no longer pending")
            let visible = try await store.fetch(Query<Article>())
            #expect(visible == allArticles, "\(context): fetch does not see the pending change set")
            #expect(try committedArticleCount(store.path) == baselineArticles.count,
                    "\(context): a failed save left part of itself in the file")
            // The submitter learned it too.
            switch ownResult {
            case .success: Issue.record("\(context): committed() returned while the change set could not be committed")
            case .failure(let error): #expect((error as? StrataError)?.code == strataError.code, "\(context): committed() threw \(error)")
            }

            // The disk recovers: the automatic retry commits.
            strata_fault_disarm()
            try await persistAfterRelease(store, expected: point.expectedError, context)
            try await submission.committed()
            try await verifyCommitted(store, path: store.path, context: context)
            return .failed
        }
    }

    // MARK: A fault in the middle of a coalesced batch

    /// Where, inside the batch's transaction, the fault hits.
    enum BatchFault: String, CaseIterable, Sendable, CustomStringConvertible {
        /// A page read while a change set is applied, with a tiny page cache (once, SQLITE_IOERR_READ).
        /// (Statement journals stay in memory, `temp_store = MEMORY`: they have no write to fail.)
        case read
        /// A WAL write while the transaction runs: a tiny page cache makes SQLite spill dirty
        /// pages before COMMIT (persistent, SQLITE_FULL).
        case walSpill

        var description: String { rawValue }
        fileprivate var kind: FaultKind { self == .read ? .read : .write }
        fileprivate var file: FaultFile { [.read: FaultFile.any, .walSpill: .wal][self]! }
        fileprivate var code: Int32 {
            switch self {
            case .read: Int32(STRATA_FAULT_SQLITE_IOERR_READ)
            case .walSpill: sqliteFull
            }
        }
        var persistent: Bool { self == .walSpill }
    }

    @Test(arguments: BatchFault.allCases)
    func faultInTheMiddleOfACoalescedBatchKeepsEveryChangeSetPending(_ fault: BatchFault) async throws {
        let fixture = try await FaultFixture()
        let parts = stride(from: 0, to: batchArticles.count, by: 40).map { Array(batchArticles[$0..<min($0 + 40, batchArticles.count)]) }
        try #require(parts.count == 5)

        /// Runs the batch: the store's queue is blocked while the five change sets are submitted,
        /// so they coalesce into one transaction. `arm` runs just before the queue is released.
        /// `marks` gets the I/O counts at the start of each savepoint.
        func runBatch(_ hold: HoldOnRetry, marks: Locked<[IOCounts]>, arm: () -> Void) async throws -> (Store, [Submission]) {
            let observer = hold.observer
            var configuration = fixture.configuration(nil)
            configuration.statementObserver = { sql in
                if sql.hasPrefix("SAVEPOINT ") { marks.withLock { $0.append(IOCounts.current()) } }
                observer(sql)
            }
            strata_fault_disarm()
            let store = try await fixture.open(try fixture.freshCopy(), configuration: configuration)
            // A tiny page cache: pages are read again (not kept from the first change set)
            // and dirty pages spill to the WAL while the transaction runs.
            try await store.onQueue { writer in try writer.connection.execute("PRAGMA cache_size = 4") }
            let gate = QueueGate()
            let blocked = Task { try await store.read { _ in gate.hold() } }
            try #require(await waitOff(gate.entered), "the store's queue never ran the blocking read")
            let submissions = try parts.map { try store.submit(changeSet($0)) }
            #expect(store.pendingCount == parts.count)
            strata_fault_reset_counts()
            marks.withLock { $0.removeAll() }
            arm()
            gate.release()
            #expect(try await blocked.value)
            return (store, submissions)
        }

        // Measure: where each change set's savepoint starts, in calls of the fault's kind and file.
        let starts = Locked([IOCounts]())
        let (measured, measuredSubmissions) = try await runBatch(HoldOnRetry(code: fault.code), marks: starts) {}
        try await measured.persist()
        for submission in measuredSubmissions { try await submission.committed() }
        let savepoints = starts.withLock { $0 }
        try #require(savepoints.count == parts.count, "expected one savepoint per change set in one transaction")
        let offsets = savepoints.map { $0.count(fault.kind, in: fault.file) } + [IOCounts.current().count(fault.kind, in: fault.file)]
        // The middle change set (third of five) or a neighbour: one that makes such calls.
        let target = try #require([2, 1, 3].first { offsets[$0 + 1] > offsets[$0] },
                                  "no middle change set makes a \(fault.kind) of \(fault.file) inside the transaction: \(offsets)")

        // Fail the first such call inside that change set.
        let expected: StrataError.Code = fault.code == sqliteFull ? .diskFull : .ioError
        let hold = HoldOnRetry(code: fault.code)
        let (store, submissions) = try await runBatch(hold, marks: Locked([])) {
            strata_fault_arm_in(fault.kind.raw, fault.file.rawValue, offsets[target] + 1, fault.persistent ? 1 : 0, fault.code)
        }
        defer { strata_fault_disarm() }
        var failure: StrataError?
        do { try await store.persist() } catch { failure = error as? StrataError }
        #expect(strata_fault_injected() >= 1)
        _ = strata_fault_hold_if_injected(fault.code)
        #expect(failure?.code == expected, "\(fault): persist() reported \(String(describing: failure))")
        // The fault hit mid-batch: after at least one change set's savepoint was released, before the
        // batch ended. The aim is `target`, but where the counted call falls can move by a change set
        // or two between the measuring run and this one (a WAL spill with the page cache's state; a
        // read was seen landing in the last change set once in CI): any change set after the first
        // proves the point — those before it were released when the fault hit.
        let statements = hold.statements
        let firstBegin = statements.firstIndex { $0 == "BEGIN IMMEDIATE TRANSACTION" } ?? statements.endIndex
        let firstRollback = statements[firstBegin...].firstIndex { $0 == "ROLLBACK TRANSACTION" } ?? statements.endIndex
        let opened = statements[firstBegin..<firstRollback].filter { $0.hasPrefix("SAVEPOINT ") }.count
        #expect(opened > 1 && opened <= parts.count,
                "the fault did not hit the middle of the batch (aimed at change set \(target + 1) of \(parts.count), \(opened) savepoints opened)")

        // Every change set stays pending, visible, and out of the file — including those whose
        // savepoints were released before the fault.
        #expect(store.pendingCount == parts.count)
        #expect(try await store.fetch(Query<Article>()) == allArticles)
        #expect(try committedArticleCount(store.path) == baselineArticles.count)
        for submission in submissions {
            do {
                try await submission.committed()
                Issue.record("change set \(submission.sequence) claims to be committed")
            } catch let error as StrataError {
                #expect(error.isTransient)
            }
        }

        strata_fault_disarm()
        try await persistAfterRelease(store, expected: expected, "\(fault) batch")
        for submission in submissions { try await submission.committed() }
        try await verifyCommitted(store, path: store.path, context: "\(fault) batch")
        print("[FaultInjection] coalesced batch, \(fault): fault in change set \(opened) of \(parts.count) (aimed at \(target + 1)); "
              + "\(parts.count) kept pending, all committed after the disk recovered")
    }

    // MARK: Two processes on one file

    @Test func twoProcessesWriteOneFileWithoutBusyErrorsAndSeeEachOthersChanges() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        let count = 400
        let store = try await openStore(path, entities: [TwoProcessNote.self])   // normal 5 s busy timeout
        let start = try await store.currentChangeToken()
        let failures = store.failures()

        let probe = try ProbeRun(["two-process-writer", path, "child", "parent", "\(count)"], showErrors: true)
        defer { probe.kill() }

        let ready = await probe.line(startingWith: "ready ", seconds: 60)
        try #require(ready != nil, "the probe did not open the store: \(probe.allLines)")

        // Both processes write at once, each committing every change set on its own; halfway,
        // each waits for the other, so that their second halves certainly run together.
        probe.send("go")
        var probeHalfway = false
        let (errors, first, last) = await writeNotes(store, writer: "parent", count: count) {
            probeHalfway = await probe.line(startingWith: "halfway", seconds: 60) != nil
            probe.send("continue")
        }
        #expect(probeHalfway, "the probe did not reach its halfway point: \(probe.allLines)")
        #expect(errors.isEmpty, "errors reached this process's caller: \(errors.prefix(5))")
        let wrote = await probe.line(startingWith: "wrote ", seconds: 90)
        try #require(wrote != nil, "the probe did not finish writing: \(probe.allLines)")
        probe.send("check \(count)")
        let status = await probe.exited(seconds: 60)
        probe.closeInput()
        try #require(status != nil, "the probe did not exit: \(probe.allLines)")

        let lines = probe.allLines
        #expect(status.map(ProbeRun.exitCode) == 0, "probe wait status \(status ?? -1): \(lines)")
        #expect(!lines.contains { $0.hasPrefix("error ") }, "errors reached the probe's caller: \(lines.filter { $0.hasPrefix("error ") }.prefix(5))")
        #expect(lines.contains("result ok"), "\(lines)")
        #expect(lines.contains("saw \(count) \(count)"), "the probe did not see this process's notes: \(lines)")
        let published = await publishedFailures(failures)
        #expect(published.isEmpty, "failures() published: \(published.prefix(5))")
        #expect(!published.contains { $0.code == .busy })

        // The two processes really wrote at the same time: their commit windows overlap and the
        // change log interleaves them.
        let childTimes = wrote?.split(separator: " ").dropFirst(2).compactMap { Double($0) } ?? []
        try #require(childTimes.count == 2, "\(String(describing: wrote))")
        #expect(childTimes[0] < last && first < childTimes[1], "the writers did not overlap in time")

        // This process sees every note of the other, by fetch and in the change log.
        #expect(try await store.count(Query<TwoProcessNote>(where: Attribute("writer") == "child" && Attribute("id") != "shared"))
                == count)
        #expect(try await store.count(Query<TwoProcessNote>()) == 2 * count + 1)
        let history = try await store.changes(since: start)
        let inserts = history.changes.filter { $0.entity == TwoProcessNote.entityName && $0.operation == .insert }
            .compactMap { String.fromDatabaseValue($0.key) }
        let childInserts = inserts.filter { $0.hasPrefix("child-") }
        #expect(Set(childInserts) == Set((0..<count).map { "child-\($0)" }))
        let writers = inserts.filter { $0 != "shared" }.map { $0.hasPrefix("child-") }
        let switches = zip(writers, writers.dropFirst()).filter { $0 != $1 }.count
        // Writers one after the other would switch once. The handshake orders both first halves
        // before both second halves, so the log switches at least twice (more, as the busy
        // handler lets them interleave): more than once shows real interleaving.
        #expect(switches >= 2, "the change log shows \(switches) switches between the writers: not concurrent")
        #expect(try await store.integrityProblems().isEmpty)
        print("[FaultInjection] two processes: \(count) change sets each, \(switches) switches between writers in the change log; "
              + "errors seen by callers: \(errors.count) here, \(lines.filter { $0.hasPrefix("error ") }.count) in the probe")
    }

    // MARK: WAL growth under a long-lived reader

    @Test func walGrowsUnderALongLivedReaderAndIsBoundedAgainOnceReleased() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("wal.sqlite")
        let wal = path + "-wal"
        let writer = try await openStore(path, entities: [WalTick.self])
        let limit = try #require(StoreConfiguration().journalSizeLimit, "the default configuration bounds the WAL")
        let reader = try await openStore(path, entities: [WalTick.self])
        var tick = ChangeSet()
        tick.insert(WalTick(id: 0, value: "seed"))
        try await writer.submit(tick).committed()
        #expect(try await writer.checkpoint(.truncate).wasBlocked == false)
        #expect(fileSize(wal) == 0)

        var nextID: Int64 = 1
        func commit(_ count: Int, sample: (Int) -> Void = { _ in }) async throws {
            for index in 0..<count {
                var changes = ChangeSet()
                changes.insert(WalTick(id: nextID, value: "tick \(nextID) " + String(repeating: "x", count: 100)))
                nextID += 1
                try await writer.submit(changes).committed()
                sample(index)
            }
        }

        // A reader pins its snapshot: `read` is one read transaction, open while its body runs.
        let gate = QueueGate()
        let pinned = Task {
            try await reader.read { db -> ([Int], Bool) in
                func count() throws -> Int { Int.fromDatabaseValue(try db.value("SELECT count(*) FROM WalTick") ?? .null) ?? -1 }
                let before = try count()
                let released = gate.hold()
                let after = try count()   // same transaction: still the snapshot from before the commits
                return ([before, after], released)
            }
        }
        try #require(await waitOff(gate.entered), "the reader never started")

        // Thousands of commits while it holds: the WAL can only grow (no reset behind a reader).
        var sizes: [Int64] = []
        try await commit(3_000) { index in if index % 100 == 99 { sizes.append(fileSize(wal)) } }
        let grown = fileSize(wal)
        #expect(zip(sizes, sizes.dropFirst()).allSatisfy { $0 <= $1 }, "the WAL shrank under a reader: \(sizes)")
        #expect(grown > 2 * Int64(limit), "the WAL grew to \(grown) bytes only")
        let blocked = try await writer.checkpoint(.passive)
        #expect(blocked.checkpointedFrames < blocked.logFrames, "a checkpoint copied frames the reader still needs")

        gate.release()
        let (seen, released) = try await pinned.value
        #expect(released)
        #expect(seen == [1, 1], "the reader's snapshot was not held over the commits: \(seen)")

        // Released: further commits with the automatic checkpoint bring the WAL back under the
        // limit within a few commits, and keep it there.
        var afterRelease: [Int64] = []
        try await commit(2_000) { _ in afterRelease.append(fileSize(wal)) }
        let firstBounded = try #require(afterRelease.firstIndex { $0 <= Int64(limit) },
                                        "the WAL stayed above \(limit) bytes: \(afterRelease.suffix(3))")
        #expect(firstBounded < 10, "the WAL took \(firstBounded) commits to shrink")
        #expect(afterRelease[firstBounded...].allSatisfy { $0 <= Int64(limit) },
                "the WAL grew past \(limit) bytes again: max \(afterRelease[firstBounded...].max() ?? 0)")

        // And an explicit TRUNCATE checkpoint empties it.
        let truncated = try await writer.checkpoint(.truncate)
        #expect(!truncated.wasBlocked)
        #expect(fileSize(wal) == 0)
        #expect(try await writer.count(Query<WalTick>()) == Int(nextID))
        #expect(try await reader.count(Query<WalTick>()) == Int(nextID))
        #expect(try await writer.integrityProblems().isEmpty)
        print("[FaultInjection] WAL: grew to \(grown) bytes under a reader over 3000 commits; "
              + "\(firstBounded + 1) commits after release it was \(afterRelease[firstBounded]) bytes (limit \(limit)), "
              + "max \(afterRelease[firstBounded...].max() ?? 0) over the next \(afterRelease.count - firstBounded)")
    }
}
