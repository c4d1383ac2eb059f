import Foundation

extension Store {
    /// Takes in what was committed from outside the store since it last looked, before a read
    /// whose rows a context registers: the read then never shows an outside change the contexts
    /// have not been told of (so a held copy is never newer in sequence but older in content).
    /// On the queue; costs one `PRAGMA data_version` when no other connection committed since the
    /// last look (`ownConnectionWrote`: `Store.write` wrote on this connection, so the log is read).
    func takeInOutsideCommits(_ writer: Writer, ownConnectionWrote: Bool = false) {
        // Another connection's commit moves `PRAGMA data_version`; this connection's do not. Only
        // a write on this connection outside the pipeline (`Store.write`) needs the log read anyway.
        let version = try? writer.connection.rows("PRAGMA data_version").first?.first.flatMap(Int64.fromDatabaseValue)
        if !ownConnectionWrote, let version, version == writer.lastDataVersion { return }
        writer.lastDataVersion = version
        let known = pipeline.withLock { $0.committedGeneration }
        guard let generation = try? ChangeLog.generation(writer.connection), generation > known else { return }
        drain(checkingOutside: true)
    }

    /// Tells every context what was committed from outside (``OutsideChanges``), as one change set
    /// in the store's order, after the commit that read it (`rows`: the objects as that commit
    /// left them). Change sets accepted since that commit's batch was taken (`batchLast`) were
    /// made on copies older than the outside change: their saves of those objects are shown as
    /// the next commit will resolve them (``OutsideConflict``), so that contexts end where the
    /// file does. On the queue.
    func acceptOutside(_ found: OutsideChanges, rows: OutsideChanges.Rows, after batchLast: UInt64) {
        for _ in 0..<100 {
            let (since, next) = pipeline.withLock { state in
                (state.pending.filter { $0.sequence > batchLast && !$0.changes.isOutside }, state.nextSequence)
            }
            var current = rows
            for item in since { resolve(item.changes, against: found, onto: &current) }
            let changes = outsideChangeSet(current, keys: found.keys)
            let accepted = pipeline.withLock { state -> Bool? in
                guard !state.isClosed else { return nil }
                // Accepted meanwhile: resolve again with it, so no change set is overlooked.
                guard state.nextSequence == next else { return false }
                let sequence = state.nextSequence
                state.nextSequence += 1
                state.pending.append(.init(sequence: sequence, changes: changes))
                state.outsideKeys.append((sequence, found.keys))
                for observer in state.acceptObservers.values { observer(.accepted(sequence, changes)) }
                state.drainScheduled = true
                return true
            }
            switch accepted {
            case nil: return
            case true?:
                queue.async { self.drain() }
                return
            case false?: continue
            }
        }
        logger.error("changes committed outside the store could not be told to the contexts: saves kept arriving")
    }

    /// Applies `changes`' saves and deletions of objects `found` lists to `rows`, as the writer
    /// will write them: by the policy of the context that made the change set, or as they are for
    /// a change set made with ``ChangeSet``'s API (as a fetch's overlay shows it).
    private func resolve(_ changes: ChangeSet, against found: OutsideChanges,
                         onto rows: inout OutsideChanges.Rows) {
        for (entity, run) in changes.entityRuns {
            guard let keys = found.keys[entity], let schema = try? registry.schema(named: entity),
                  var entry = rows[entity] else { continue }
            for operation in changes.operations[run] {
                guard let key = OutsideConflict.key(of: operation, keyPosition: schema.primaryKeyIndex),
                      keys.contains(key) else { continue }
                switch Self.outcome(of: operation, stored: entry[key], policy: changes.policy) {
                case .write(let row): entry[key] = row
                case .delete: entry[key] = nil
                case .keep, .fail: break
                }
            }
            rows[entity] = entry
        }
    }

    /// ``OutsideConflict/resolve(_:stored:policy:)``, or — without a policy — the operation as it is.
    private static func outcome(of operation: ChangeSet.Operation, stored: [DatabaseValue]?,
                                policy: MergePolicy?) -> OutsideConflict.Outcome {
        if let policy { return OutsideConflict.resolve(operation, stored: stored, policy: policy) }
        switch operation {
        case .save(let save):
            guard let row = save.row, save.mode != .update || stored != nil else { return .keep }
            return .write(row)
        case .delete: return .delete
        case .bulkUpdate, .bulkDelete: return .keep
        }
    }

    /// The change set that tells contexts of objects written from outside (`keys`): each row found
    /// saved, each key without one deleted. A row its attribute cannot read is left out and
    /// reported (to the log and ``failures()``), never shown as something else.
    private func outsideChangeSet(_ rows: OutsideChanges.Rows, keys: [String: Set<DatabaseValue>]) -> ChangeSet {
        var changes = ChangeSet()
        changes.isOutside = true
        for (entity, keys) in keys.sorted(by: { $0.key < $1.key }) {
            guard let schema = try? registry.schema(named: entity) else { continue }
            let entry = rows[entity] ?? [:]
            let type = registry.type(named: entity)
            let decoder = RowDecoder<[DatabaseValue]>(schema: schema)
            for (key, row) in entry.sorted(by: { DatabaseValue.compare($0.key, $1.key) < 0 }) {
                do {
                    try schema.checkRow(row)
                    changes.appendSave(try Self.object(of: type, decoder, row), .upsert, row: row, entity: entity)
                } catch {
                    let failure = Self.strataError(error, path: path).with(entity: entity, objectID: "\(key)")
                    report(StrataError(failure.code, "a change committed outside the store left \(entity) \(key) unreadable; "
                                       + "contexts keep their copy: \(failure.message)", path: path, entity: entity,
                                       attribute: failure.attribute, objectID: "\(key)"))
                }
            }
            for key in keys.filter({ entry[$0] == nil }).sorted(by: { DatabaseValue.compare($0, $1) < 0 }) {
                changes.appendDelete(entity: entity, key: key)
            }
        }
        return changes
    }

    private static func object<E: Entity>(of type: E.Type, _ decoder: RowDecoder<[DatabaseValue]>,
                                          _ row: [DatabaseValue]) throws -> any Entity {
        try decoder.decode(E.self, from: row)
    }

    /// Sends a failure nobody waits for to the log and ``failures()``.
    private func report(_ failure: StrataError) {
        logger.error("outside change", metadata: ["error": "\(failure)"])
        for observer in pipeline.withLock({ Array($0.failureObservers.values) }) { observer.yield(failure) }
    }
}
