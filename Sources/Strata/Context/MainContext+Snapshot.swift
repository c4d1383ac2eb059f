import Foundation

extension MainContext {
    /// Archives the main context — every resident entity and every other object it holds, never
    /// unsaved edits — to `path`, LZ4-compressed, written atomically (temporary file, fsync,
    /// rename, fsync of the directory).
    ///
    /// The archive reflects only state SQLite has: it waits until every change set the context
    /// reflects is committed, and refuses (throws) if one of them failed. Encoding and writing
    /// run off the main actor.
    /// - Throws: `.invalidSnapshot` when a change set the context reflects failed; I/O errors
    ///   (`.diskFull`, `.ioError`, `.cannotOpen`) from writing the file.
    @discardableResult
    public func writeSnapshot(to path: String) async throws -> SnapshotSummary {
        try await writeSnapshot(to: path, stopAfter: nil)
    }

    /// ``writeSnapshot(to:)`` that stops after `step`, for crash tests (the caller then kills
    /// the process, leaving the file system as a crash at that moment would).
    @_spi(Testing)
    public func writeSnapshot(to path: String, stopAfter step: SnapshotWriteStep?) async throws -> SnapshotSummary {
        // Never archive what a failed change set left: let the corrections finish first. What
        // is resolved is read before merging, so every failure up to `committedThrough` has its
        // correction under way (failures are announced under the lock that advances it); later
        // ones are checked after the wait below.
        var committedThrough: UInt64, committedGeneration: Int64
        while true {
            (committedThrough, committedGeneration) = store.pipeline.withLock { ($0.resolvedThrough, $0.committedGeneration) }
            mergePending()
            guard let correction = corrections.values.first else { break }
            await correction.value
        }
        let sequence = graph.appliedSequence
        // The saved copies as of now: copy-on-write copies of the tables, a few retains each.
        // They are ordered and copied into blocks off the main actor.
        let captured = graph.tables.values.sorted(by: { $0.schema.name < $1.schema.name })
            .filter { $0.registeredCount > 0 && $0.schema.residency != .notKept }.map { CapturedTable(saved: $0.saved.copy()) }
        // Wait until everything the captured state reflects is committed.
        try await store.waitUntilResolved(through: sequence)
        let (resolved, generationNow, failedInside, outsideFloor) = store.pipeline.withLock {
            ($0.resolvedThrough, $0.committedGeneration, $0.failure(after: committedThrough, through: sequence),
             $0.outsideWriteFloor)
        }
        if let failed = failedInside {
            throw StrataError(.invalidSnapshot, "\(failed), which the main context reflects, failed to commit; "
                              + "no snapshot was written", path: path)
        }
        // The generation must not claim changes the archive lacks: when commits went past the
        // captured state, fall back to the last commit known to be inside it; when someone else
        // wrote the file since the store opened, to the generation before that write (the main
        // context never merged it). Catch-up re-reads the difference on the next launch.
        let generation = min(resolved == sequence ? generationNow : committedGeneration, outsideFloor ?? .max)
        let store = self.store
        return try await Task.detached(priority: .utility) {
            let start = ContinuousClock.now
            let sections = try captured.map { captured in
                SnapshotArchive.Section(schema: captured.saved.schema, chunks: try EntityTable.archiveBlocks(
                    of: captured.saved, first: SnapshotArchive.objectsInFirstChunk, chunk: SnapshotArchive.objectsPerChunk))
            }
            let written = try SnapshotArchive.encode(sections, storeID: store.storeID, generation: generation,
                                                     schemas: store.registry.schemas)
            try AtomicFile.write([written.header] + written.chunks, to: path, stopAfter: step)
            let header = written.described
            store.logger.debug("snapshot written", metadata: [
                "path": "\(path)", "objects": "\(header.objectCount)", "bytes": "\(header.fileSize)",
                "generation": "\(generation)"])
            return SnapshotSummary(path: path, header: header, duration: ContinuousClock.now - start)
        }.value
    }

    /// Writes a snapshot to `path` whenever `changes` objects have changed since the last one,
    /// and every `interval` if anything changed. `onWrite` learns each outcome. Returns an
    /// observation; cancel it to stop. (On suspend or exit, call ``writeSnapshot(to:)`` directly.)
    public func writeSnapshotsAutomatically(
        to path: String, afterChanges changes: Int = 1_000, interval: Duration? = nil,
        onWrite: (@MainActor (Result<SnapshotSummary, Error>) -> Void)? = nil
    ) -> ChangeObservation {
        let state = AutomaticSnapshots(path: path, threshold: changes, onWrite: onWrite)
        let observation = onChange { [weak self] change in
            state.changed += change.entities.values.reduce(0) { $0 + $1.inserted.count + $1.updated.count + $1.deleted.count }
            if state.changed >= state.threshold, let self { state.write(self) }
        }
        let timer = interval.map { interval in
            Task { @MainActor [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    if state.changed > 0, let self { state.write(self) }
                }
            }
        }
        return ChangeObservation {
            observation.cancel()
            timer?.cancel()
        }
    }
}

@MainActor
private final class AutomaticSnapshots {
    let path: String
    let threshold: Int
    let onWrite: (@MainActor (Result<SnapshotSummary, Error>) -> Void)?
    var changed = 0
    var isWriting = false

    init(path: String, threshold: Int, onWrite: (@MainActor (Result<SnapshotSummary, Error>) -> Void)?) {
        self.path = path
        self.threshold = threshold
        self.onWrite = onWrite
    }

    func write(_ context: MainContext) {
        guard !isWriting else { return }
        isWriting = true
        changed = 0
        Task { @MainActor in
            defer { isWriting = false }
            do {
                onWrite?(.success(try await context.writeSnapshot(to: path)))
            } catch {
                context.store.logger.warning("automatic snapshot failed", metadata: ["error": "\(error)"])
                onWrite?(.failure(error))
            }
        }
    }
}

extension MainContext {
    /// A change set this context merged at acceptance failed for good at commit: re-read the
    /// objects it touched from the store (they are absent if SQLite never had them) and publish
    /// the correction as one ``ContextChange/Origin/reload`` change.
    func reloadAfterFailure(_ changes: ChangeSet) {
        let id = UUID()
        corrections[id] = Task { @MainActor in
            defer { corrections[id] = nil }
            do {
                var change = ContextChange(origin: .reload, sequence: graph.mergedSequence)
                for (entity, keys) in changes.touchedKeys() {
                    guard let type = store.registry.types.first(where: { $0.type.entityName == entity })?.type else { continue }
                    try await reload(type, keys: keys, into: &change)
                }
                change.entities = change.entities.filter { !$0.value.isEmpty }
                if !change.isEmpty { publish(change) }
            } catch {
                report(error, while: "re-reading objects after a failed save")
            }
        }
    }

    private func reload<E: Entity>(_ type: E.Type, keys: [DatabaseValue]?, into change: inout ContextChange) async throws {
        let table = try graph.table(E.self)
        let ids = (keys ?? table.heldKeys).compactMap(E.ID.fromDatabaseValue)
        try await reread(E.self, ids: ids, into: &change)
    }
}

/// A copy of a table's saved copies (``ColumnTable/copy()``) that a snapshot archives off the
/// main actor.
///
/// `@unchecked Sendable` is safe: the copy is made on the main actor and is referenced only by
/// this value, which is handed to one detached task and never touched by the main actor again;
/// the task only reads it. The storage it shares with the main context's table is copy-on-write
/// arrays: the main context's writes copy the buffers they change (a buffer referenced twice is
/// never written in place), so the task reads exactly the rows as of the capture.
private struct CapturedTable: @unchecked Sendable {
    let saved: ColumnTable
}
