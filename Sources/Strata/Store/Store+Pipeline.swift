import Foundation

/// The bookkeeping of accepted change sets, guarded by ``Store/pipeline``.
struct PipelineState {
    struct Pending {
        let sequence: UInt64
        let changes: ChangeSet
    }

    /// The sequence number the next accepted change set gets.
    var nextSequence: UInt64 = 1
    /// Accepted change sets not yet committed, in acceptance order.
    var pending: [Pending] = []
    /// Every change set with a sequence up to this one is committed or has failed for good.
    var resolvedThrough: UInt64 = 0
    var drainScheduled = false
    var retryAttempt = 0
    /// The failure of the last attempt, while its change sets wait for a retry.
    var transientError: StrataError?
    /// Permanent failures not yet reported to a waiter, by sequence.
    var unreportedFailures: [UInt64: StrataError] = [:]
    /// Permanent failures by sequence (the newest 10,000), so that a ``Submission`` learns its
    /// own even after `persist()` reported it.
    var permanentFailures: [UInt64: StrataError] = [:]
    var waiters: [Waiter] = []
    var failureObservers: [UUID: AsyncStream<StrataError>.Continuation] = [:]
    var acceptObservers: [UUID: @Sendable (StoreEvent) -> Void] = [:]
    var isClosed = false
    /// Whether a drain (a transaction) is running on the queue right now.
    var isDraining = false
    /// The change-log generation as of the last commit of change sets up to ``resolvedThrough``.
    var committedGeneration: Int64 = 0
    /// The generation just before the first change this store saw committed by someone else
    /// (another connection or process, or ``Store/write(_:)``) since it opened: contexts never
    /// merged such changes, so nothing they hold may claim a generation past it. Nil while every
    /// commit since open came through the pipeline.
    var outsideWriteFloor: Int64?
    /// Objects changed from outside, by the sequence of the change set that told the contexts
    /// (``OutsideChanges``): a save or deletion of one of them in a change set accepted before
    /// that sequence was made on an older copy, and the writer resolves it by its policy. Kept
    /// while such a change set is pending.
    var outsideKeys: [OutsideRecord] = []
    /// The keys, by entity, that the outside change set `sequence` told the contexts of.
    typealias OutsideRecord = (sequence: UInt64, keys: [String: Set<DatabaseValue>])
    /// Whether a look at the change log, for a write the file watcher saw, is queued already.
    var outsideCheckQueued = false
    /// Set when an attempt failed because the file was replaced (`.fileReplaced`): no retry is
    /// scheduled; a wait or a submission makes the next attempt.
    var retriesStopped = false
    /// When the last look queued by ``outsideCheckQueued`` started.
    var lastOutsideLook: DispatchTime?
    /// Whether the watcher reported that the file was replaced underneath the store (once).
    var reportedReplacement = false
    /// When pruning last looked at the history's commit times (seconds since 1970).
    var historyAgeCheckedAt: Double = 0

    /// The keys changed from outside after the contexts that made the change set `sequence` last
    /// looked: those in `records` (``outsideKeys``) of an outside change set accepted after it.
    static func outsideKeys(in records: [OutsideRecord],
                            after sequence: UInt64) -> [String: Set<DatabaseValue>] {
        var keys: [String: Set<DatabaseValue>] = [:]
        for record in records where record.sequence > sequence {
            keys.merge(record.keys) { $0.union($1) }
        }
        return keys
    }

    /// Names a change set after `low` and up to `high` that failed for good, if any. Failures are
    /// remembered for the newest ``rememberedFailures`` change sets: when that window no longer
    /// reaches back to `low`, one may have been forgotten, and the answer says so (to be safe).
    func failure(after low: UInt64, through high: UInt64) -> String? {
        if let found = permanentFailures.keys.filter({ $0 > low && $0 <= high }).min() { return "change set \(found)" }
        if permanentFailures.count >= Self.rememberedFailures, let oldest = permanentFailures.keys.min(),
           oldest > low + 1, low < high {
            return "a change set between \(low + 1) and \(oldest - 1) (too many failures to tell which)"
        }
        return nil
    }

    static let rememberedFailures = 10_000

    /// Someone waiting for change sets to be resolved: `persist()` (through a sequence) or a
    /// ``Submission`` (exactly one sequence).
    struct Waiter {
        let from: UInt64
        let through: UInt64
        let continuation: CheckedContinuation<Void, Error>
        /// A ``Submission`` waiting for its own change set (not `persist()`).
        var isSubmission = false
    }
}

/// A receipt for a submitted change set.
public struct Submission: Sendable {
    /// The change set's place in the store's order.
    public let sequence: UInt64
    let store: Store

    /// Returns once this change set is committed to SQLite.
    ///
    /// - Throws: the permanent failure of this change set (a constraint, an unknown object), or the
    ///   transient failure of the attempt that included it (busy, disk full); after a transient
    ///   failure the change set is still pending and will be retried.
    public func committed() async throws {
        try await store.waitForResolution(from: sequence, through: sequence, isSubmission: true)
    }
}

extension Store {
    /// Accepts a change set and returns at once; it is committed in the background.
    ///
    /// Each object's row is encoded here, once, on the calling thread (its row codec).
    /// - Throws: ``StrataError`` before accepting anything, if the change set names an entity the
    ///   store does not know, holds an object that cannot be stored (`.invalidValue`: NaN, an
    ///   unsigned integer past `Int64.max`; a row codec that does not match the schema), or a bulk
    ///   operation names an unknown attribute or a mistyped value; `.closed` after ``close()``.
    @discardableResult
    public func submit(_ changes: ChangeSet) throws -> Submission {
        try submit(changes, byMainContext: false, check: nil).submission
    }

    /// Submits, after running `check` under the pipeline lock (nothing can be accepted meanwhile).
    /// Every object's row is encoded here, once, on the caller's thread (a worker's save encodes on
    /// the worker): the writer binds those rows, and merges and overlays use them as they are.
    /// When the main context will merge the change set into new rows (it is open, and
    /// `byMainContext` is false: its own saves it applies over its edits, from their rows), the
    /// saves' cells are built here too, on the saving thread rather than on the merge's path.
    /// Returns the submission and the sealed change set that was accepted.
    func submit(_ changes: ChangeSet, byMainContext: Bool,
                check: (() throws -> Void)?) throws -> (submission: Submission, sealed: ChangeSet) {
        try validate(changes)
        let merged = !byMainContext && mainContextSlot.withLock { $0.object != nil }
        let changes = try changes.sealed(buildsCells: merged) { entity in RowEncoder(schema: try registry.schema(named: entity)) }
        let (sequence, scheduleDrain) = try pipeline.withLock { state -> (UInt64, Bool) in
            guard !state.isClosed else { throw StrataError(.closed, "the store at \(path) is closed", path: path) }
            try check?()
            let sequence = state.nextSequence
            state.nextSequence += 1
            state.pending.append(.init(sequence: sequence, changes: changes))
            for observer in state.acceptObservers.values { observer(.accepted(sequence, changes)) }
            let schedule = !state.drainScheduled
            state.drainScheduled = true
            return (sequence, schedule)
        }
        if scheduleDrain { queue.async { self.drain() } }
        return (Submission(sequence: sequence, store: self), changes)
    }

    private func validate(_ changes: ChangeSet) throws {
        // Every operation names a registered entity, looked up once per run of one entity's.
        for (name, run) in changes.entityRuns {
            let schema = try registry.schema(named: name)
            let type = registry.type(named: name)
            for index in run {
                let operation = changes.operations[index]
                // A save made with ChangeSet's API is of the registered type, or refused here;
                // a context's save has a row its table of that type made. Merges rely on it.
                if case .save(let save) = operation, save.row == nil, Swift.type(of: save.object) != type {
                    throw StrataError(.unknownEntity, "entity name \(name) is registered for \(type), not for "
                                      + "\(Swift.type(of: save.object)), whose \(save.object.id) was saved", entity: name)
                }
                try validate(operation, schema)
            }
        }
    }

    /// Checks a bulk operation's attributes, values and filter against `schema`; saves need nothing more.
    private func validate(_ operation: ChangeSet.Operation, _ schema: EntitySchema) throws {
        if case .save = operation { return }
        switch operation {
        case .bulkUpdate(_, let target, let assignments):
            for assignment in assignments {
                let position = try schema.requirePosition(of: assignment.attribute)
                if position == schema.primaryKeyIndex {
                    throw StrataError(.invalidValue, "a bulk update cannot change the primary key",
                                      entity: schema.name, attribute: assignment.attribute)
                }
                _ = try ResolvedFilter.checked(assignment.value, schema, position)
                if case .real = assignment.value, schema.attributes[position].type.sqlType == "INTEGER" {
                    // SQLite would keep a fraction as REAL in the INTEGER column: unreadable as the attribute.
                    throw StrataError(.invalidValue, "\(schema.name).\(assignment.attribute) is "
                                      + "\(schema.attributes[position].type); it cannot be set to \(assignment.value)",
                                      entity: schema.name, attribute: assignment.attribute)
                }
                if assignment.value.isNull, !schema.attributes[position].isOptional {
                    throw StrataError(.invalidValue, "\(schema.name).\(assignment.attribute) is not optional",
                                      entity: schema.name, attribute: assignment.attribute)
                }
            }
            if case .filter(let filter) = target { _ = try ResolvedFilter(filter, schema: schema) }
        case .bulkDelete(_, .filter(let filter)):
            _ = try ResolvedFilter(filter, schema: schema)
        default:
            break
        }
    }

    /// Returns once every change set submitted before the call is committed.
    ///
    /// - Throws: the transient failure that keeps changes pending (they stay pending and are
    ///   retried; call again to wait for the retry), or a permanent failure of a change set
    ///   submitted before the call that nobody has been told about yet.
    public func persist() async throws {
        let through = pipeline.withLock { $0.nextSequence - 1 }
        try await waitForResolution(from: 1, through: through)
    }

    /// The number of accepted change sets not yet committed.
    public var pendingCount: Int { pipeline.withLock { $0.pending.count } }

    /// A stream of every failure to persist: permanent failures of change sets and transient
    /// failures of attempts. Each call returns a new stream.
    public func failures() -> AsyncStream<StrataError> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<StrataError>.makeStream(bufferingPolicy: .bufferingNewest(256))
        continuation.onTermination = { [weak self] _ in
            _ = self?.pipeline.withLock { $0.failureObservers.removeValue(forKey: id) }
        }
        pipeline.withLock { $0.failureObservers[id] = continuation }
        return stream
    }

    func waitForResolution(from: UInt64, through: UInt64, isSubmission: Bool = false) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            var tryAgain = false
            let result: Result<Void, Error>? = pipeline.withLock { state in
                guard state.resolvedThrough >= through else {
                    state.waiters.append(.init(from: from, through: through, continuation: continuation,
                                               isSubmission: isSubmission))
                    // No retry is scheduled after a replaced file: this wait makes the attempt.
                    tryAgain = state.retriesStopped && !state.drainScheduled
                    if tryAgain { state.drainScheduled = true }
                    return nil
                }
                return Self.takeFailure(&state, from: from, through: through, isSubmission: isSubmission)
                    .map { .failure($0) } ?? .success(())
            }
            if let result { continuation.resume(with: result) }
            if tryAgain { queue.async { self.drain() } }
        }
    }

    /// Waits until every change set up to `sequence` is committed or failed, through retries,
    /// without taking failure reports meant for submitters.
    func waitUntilResolved(through sequence: UInt64) async throws {
        try await waitForResolution(from: .max, through: sequence)
    }

    private static func takeFailure(_ state: inout PipelineState, from: UInt64, through: UInt64,
                                    isSubmission: Bool = false) -> StrataError? {
        if isSubmission {
            // The submitter always learns its own change set's fate, whoever heard of it first.
            state.unreportedFailures[from] = nil
            return state.permanentFailures[from]
        }
        guard let sequence = state.unreportedFailures.keys.filter({ $0 >= from && $0 <= through }).min() else { return nil }
        return state.unreportedFailures.removeValue(forKey: sequence)
    }

    /// Commits everything pending in one transaction, and takes in what was committed from outside
    /// since the last one (``OutsideChanges``). Runs on the queue. With `checkingOutside`, opens
    /// a transaction even with nothing pending, to take in outside commits.
    func drain(checkingOutside: Bool = false) {
        let (batch, known, outsideKeys) = pipeline.withLock { state in
            state.drainScheduled = false
            state.isDraining = !state.pending.isEmpty || checkingOutside
            return (state.pending, state.committedGeneration, state.outsideKeys)
        }
        guard !batch.isEmpty || checkingOutside else { return }
        defer { pipeline.withLock { $0.isDraining = false } }
        var failures: [UInt64: StrataError] = [:]
        var conflicts: [UInt64: [String: [DatabaseValue]]] = [:]
        let generations: (before: Int64, after: Int64)
        var outside: (changes: OutsideChanges, rows: OutsideChanges.Rows)?
        // The commit time every transaction of this drain records.
        let now = Date().timeIntervalSince1970
        do {
            generations = try withOpenWriter { writer in
                let generations = try writer.connection.inTransaction(.immediate) { () throws -> (Int64, Int64) in
                    // What the log holds before this batch: past the last commit of the pipeline
                    // only if someone else committed in between — what they wrote is read here,
                    // where nobody else can commit until this transaction ends.
                    let before = try ChangeLog.generation(writer.connection)
                    let found = before > known
                        ? try OutsideChanges.read(after: known, through: before, registry: registry, writer.connection) : nil
                    if found?.lostEntries == true {
                        logger.error("""
                            the change log was pruned past what this store had read of outside commits: contexts \
                            may hold older copies of objects changed then until they fetch them again
                            """, metadata: ["path": "\(path)", "read through generation": "\(known)"])
                    }
                    // Others' entries are one transaction of the history, before this batch's.
                    try ChangeLog.closeOutside(at: now, writer.connection)
                    let own = batch.filter { !$0.changes.isOutside }
                    // The writer logs its change sets itself: the change-log triggers must not log
                    // them too (triggers off on this connection for the batch, back on after it).
                    let after = try writer.applyingOwnChanges(own.map(\.changes)) { () throws -> Int64 in
                        for item in own {
                            // Objects changed from outside after this change set's context read
                            // them: just found, or told to the contexts after it was accepted.
                            var changedOutside = outsideKeys.isEmpty
                                ? [:] : PipelineState.outsideKeys(in: outsideKeys, after: item.sequence)
                            if let found { changedOutside.merge(found.keys) { $0.union($1) } }
                            do {
                                try writer.connection.inSavepoint { try writer.apply(item.changes, outside: changedOutside, at: now) }
                            } catch let conflict as OutsideConflictFailure {
                                failures[item.sequence] = conflict.error
                                conflicts[item.sequence] = conflict.keys
                            } catch let error as StrataError where !error.isTransient {
                                // Some errors make SQLite roll back the whole transaction: then the
                                // rest of the batch would run in autocommit, one statement at a time.
                                // Fail the whole attempt instead; everything stays pending.
                                guard writer.connection.isInTransaction else { throw error }
                                failures[item.sequence] = error
                            }
                        }
                        // Read inside the transaction: exactly the state this commit leaves.
                        return try ChangeLog.generation(writer.connection)
                    }
                    // The outside changes' objects as this commit leaves them (the batch resolved
                    // its saves of them by their policies).
                    if let found, !found.isEmpty { outside = (found, try found.rows(writer)) }
                    return (before, after)
                }
                pruneHistoryIfNeeded(writer.connection, now: now)
                return generations
            }
        } catch {
            if let first = batch.first, let last = batch.last {
                retry(after: Self.strataError(error, path: path), first: first.sequence, last: last.sequence)
            } else if (error as? StrataError)?.code != .fileReplaced {   // that one the watcher reports
                logger.warning("reading changes committed outside the store failed; will read them at the next commit or fetch",
                               metadata: ["error": "\(error)"])
            }
            return
        }
        let failed = batch.filter { failures[$0.sequence] != nil }.map { ($0.sequence, $0.changes, conflicts[$0.sequence] ?? [:]) }
        committed(batch.count, through: batch.last?.sequence, generations: generations, failures: failures, failed: failed)
        if let outside { acceptOutside(outside.changes, rows: outside.rows, after: batch.last?.sequence ?? 0) }
    }

    private static func keepNewest(_ limit: Int, of failures: inout [UInt64: StrataError]) {
        guard failures.count > limit else { return }
        for sequence in failures.keys.sorted().prefix(failures.count - limit) { failures[sequence] = nil }
    }

    /// Prunes the history past its bounds (``StoreConfiguration/changeLogLimit``,
    /// ``StoreConfiguration/historyMaximumAge``) after a commit, never past a registered
    /// consumer. Costs a few indexed look-ups; commit times are looked at no more often than
    /// a tenth of the maximum age (at most every minute).
    func pruneHistoryIfNeeded(_ connection: Connection, now: Double) {
        let checksAge = pipeline.withLock { state -> Bool in
            guard let age = configuration.historyMaximumAge,
                  now - state.historyAgeCheckedAt >= min(60, age / 10) else { return false }
            state.historyAgeCheckedAt = now
            return true
        }
        do {
            try pruneHistory(connection, now: now, checksAge: checksAge)
        } catch {
            logger.warning("pruning the history failed; will try again", metadata: ["error": "\(error)"])
        }
    }

    /// Prunes the history by the configured bounds now (``pruneHistoryIfNeeded(_:now:)``).
    func pruneHistory(_ connection: Connection, now: Double, checksAge: Bool) throws {
        let retention = ChangeLog.Retention(limit: configuration.changeLogLimit, maximumAge: configuration.historyMaximumAge)
        guard try ChangeLog.pruningCut(retention, now: now, checksAge: checksAge, connection) != nil else { return }
        try connection.inTransaction(.immediate) {
            // Decided again inside the transaction: another store may have pruned, or a consumer registered.
            guard let cut = try ChangeLog.pruningCut(retention, now: now, checksAge: checksAge, connection) else { return }
            try ChangeLog.prune(through: cut, connection)
            logger.debug("pruned the history", metadata: ["through generation": "\(cut)"])
        }
    }

    private func committed(_ count: Int, through last: UInt64?, generations: (before: Int64, after: Int64),
                           failures: [UInt64: StrataError], failed: [(UInt64, ChangeSet, [String: [DatabaseValue]])]) {
        // The committed change sets leave the pipeline here and are freed after the lock is
        // released, at the end: freeing a large batch of saves takes time proportional to their
        // rows, and every submission waits for the lock.
        var committed: ArraySlice<PipelineState.Pending> = []
        let (ready, observers) = pipeline.withLock { state -> ([(PipelineState.Waiter, Result<Void, Error>)], [AsyncStream<StrataError>.Continuation]) in
            committed = state.pending.prefix(count)
            state.pending.removeFirst(count)
            if let last { state.resolvedThrough = last }
            // Outside keys no pending change set can conflict with any more.
            if !state.outsideKeys.isEmpty {
                let oldest = state.pending.first(where: { !$0.changes.isOutside })?.sequence ?? .max
                state.outsideKeys.removeAll { $0.sequence <= oldest }
            }
            if generations.before != state.committedGeneration, state.outsideWriteFloor == nil {
                state.outsideWriteFloor = state.committedGeneration
            }
            state.committedGeneration = generations.after
            state.retryAttempt = 0
            state.retriesStopped = false
            state.transientError = nil
            state.unreportedFailures.merge(failures) { a, _ in a }
            state.permanentFailures.merge(failures) { a, _ in a }
            // Contexts merged these optimistically at acceptance: tell them, in order, to undo.
            for (sequence, changes, conflicts) in failed {
                for observer in state.acceptObservers.values { observer(.failed(sequence, changes, conflicts: conflicts)) }
            }
            // Memory stays bounded when nobody asks: the oldest failures are forgotten first.
            Self.keepNewest(1_000, of: &state.unreportedFailures)
            Self.keepNewest(PipelineState.rememberedFailures, of: &state.permanentFailures)
            var ready: [(PipelineState.Waiter, Result<Void, Error>)] = []
            var waiting: [PipelineState.Waiter] = []
            for waiter in state.waiters {
                guard let last, waiter.through <= last else {
                    waiting.append(waiter)
                    continue
                }
                let failure = Self.takeFailure(&state, from: waiter.from, through: waiter.through,
                                               isSubmission: waiter.isSubmission)
                ready.append((waiter, failure.map { .failure($0) } ?? .success(())))
            }
            state.waiters = waiting
            return (ready, Array(state.failureObservers.values))
        }
        for (waiter, result) in ready { waiter.continuation.resume(with: result) }
        for failure in failures.sorted(by: { $0.key < $1.key }).map(\.value) {
            logger.error("change set failed", metadata: ["error": "\(failure)"])
            for observer in observers { observer.yield(failure) }
        }
        withExtendedLifetime(committed) {}
    }

    private func retry(after error: StrataError, first: UInt64, last: UInt64) {
        let (delay, failed, observers) = pipeline.withLock { state -> (TimeInterval, [PipelineState.Waiter], [AsyncStream<StrataError>.Continuation]) in
            state.retryAttempt += 1
            state.transientError = error
            let delay = min(configuration.maximumRetryDelay,
                            configuration.initialRetryDelay * pow(2, Double(min(state.retryAttempt - 1, 20))))
            var failed: [PipelineState.Waiter] = []
            state.waiters.removeAll { waiter in
                guard waiter.through >= first, waiter.from <= last else { return false }
                failed.append(waiter)
                return true
            }
            // A replaced file never comes back, nor does a closed connection: no timer keeps
            // retrying (nor keeps the store alive); the change sets stay pending and every later
            // wait or submission tries, and fails, again.
            state.retriesStopped = error.code == .fileReplaced || error.code == .closed
            state.drainScheduled = !state.retriesStopped
            return (delay, failed, Array(state.failureObservers.values))
        }
        for waiter in failed { waiter.continuation.resume(throwing: error) }
        for observer in observers { observer.yield(error) }
        if error.code == .fileReplaced || error.code == .closed {
            logger.error("persisting failed for good; the changes stay pending", metadata: ["error": "\(error)"])
            return
        }
        logger.warning("persisting failed; will retry", metadata: ["error": "\(error)", "delay": "\(delay)"])
        queue.asyncAfter(deadline: .now() + delay) { self.drain() }
    }

    static func strataError(_ error: Error, path: String) -> StrataError {
        if let error = error as? StrataError { return error }
        return StrataError(.sqlite, "\(error)", path: path)
    }

    /// Refuses further change sets, waits until everything accepted is committed, then closes
    /// the SQLite connection: when `close()` returns, the file and its locks are released
    /// (another process may switch its journal mode, copy it or delete it). Afterwards
    /// ``submit(_:)`` and every read or write throw `.closed`; contexts keep what they hold in
    /// memory, and the store stops owning its main context (see ``Store/mainContext``). Calling
    /// it again is harmless.
    ///
    /// - Throws: the failure that keeps accepted changes pending (the connection then stays
    ///   open and keeps retrying them; call `close()` again to wait for them), or a permanent
    ///   failure nobody was told about (the connection is closed all the same).
    public func close() async throws {
        pipeline.withLock { $0.isClosed = true }
        stopWatchingOutsideCommits()
        var unreported: Error?
        do {
            try await persist()
        } catch let error as StrataError where error.isTransient {
            throw error
        } catch {
            unreported = error
        }
        // The main context and the store held each other: the app's references decide from now on.
        defer { mainContextSlot.withLock { $0.release() } }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
            queue.async {
                continuation.resume(with: Result {
                    try self.writer.run { writer in
                        guard !writer.connection.isClosed else { return }
                        defer { writer.close() }
                        _ = try writer.connection.checkpoint(.passive)
                    }
                })
            }
        }
        if let unreported { throw unreported }
    }
}
