import Foundation
import Strata

// `StrataProbe two-process-writer <path> <writer> <other> <count>`: the second process of
// `FaultInjectionTests.twoProcessesWriteOneFileWithoutBusyErrorsAndSeeEachOthersChanges`.
//
// Opens the store at <path> (created by the test), writes <count> small change sets as <writer>
// while the test process writes its own, then checks that it sees every note of <other>.
//
// Protocol, one line each way (stdout is line-flushed):
//   → "ready <generation>"      the store is open; <generation> is the change-log token before any write
//   ← "go"                      start writing (the test starts at the same moment)
//   → "halfway"                 the first half of the change sets is committed; the probe waits
//   ← "continue"                the test has committed its first half too: write the second half
//                               (both second halves then run together, so the writers provably overlap)
//   → "error <code> <message>"  every failure a caller of the store saw (none expected)
//   → "wrote <n> <first> <last>" n change sets committed; wall-clock seconds of the first and last commit
//   ← "check <count>"           the test has persisted its <count> change sets
//   → "saw <rows> <logged>"     <other>'s notes fetched, and <other>'s inserts in changes(since:)
//   → "result ok" | "result fail <reason>", then the process exits 0 | 1
// A watchdog ends the process with status 3 after 120 s; EOF on stdin ends it with status 2.

/// The entity both processes write. The test declares an identical type (same name, same
/// attributes), so both processes agree on the schema.
private struct TwoProcessNote: Entity, Equatable {
    var id: String
    var writer: String
    var index: Int64
    var body: String
}

/// Runs the `two-process-writer` subcommand. `arguments` are the words after the subcommand
/// (a leading "two-process-writer" is skipped too). Returns the process's exit status.
func runTwoProcessWriter(arguments: [String]) async -> Int32 {
    weak var opened: Store?
    let status = await twoProcessWriter(arguments: arguments) { opened = $0 }
    // The store's queue may still be finishing its last block (close() resumes its caller from
    // inside it): let the store go before the process exits, so that nothing of it is alive when
    // the sanitizer builds look for leaks (a live object's weak-reference side table is invisible
    // to LeakSanitizer and would be reported).
    var turns = 0
    while opened != nil, turns < 100_000 {
        await Task.yield()
        turns += 1
    }
    return status
}

private func twoProcessWriter(arguments: [String], opened: (Store) -> Void) async -> Int32 {
    var arguments = arguments
    if arguments.first == "two-process-writer" { arguments.removeFirst() }
    guard arguments.count == 4, let count = Int(arguments[3]), count > 0 else {
        probeEmit("result fail usage: two-process-writer <path> <writer> <other> <count>")
        return 64
    }
    let (path, writer, other) = (arguments[0], arguments[1], arguments[2])
    DispatchQueue.global().asyncAfter(deadline: .now() + 120) {
        probeEmit("result fail watchdog: not finished after 120 s")
        exit(3)
    }
    do {
        let store = try await Store.open(at: path, entities: [TwoProcessNote.self])
        opened(store)
        let failures = store.failures()
        let start = try await store.currentChangeToken()
        probeEmit("ready \(start.generation)")
        guard await probeReadLine() == "go" else { return 2 }

        let errors = await writeTwoProcessNotes(store, writer: writer, count: count)
        let published = await probeDrain(failures)
        for failure in published { probeEmit("error \(failure.code) (failures stream) \(failure.message)") }
        guard errors == 0, published.isEmpty else {
            probeEmit("result fail \(errors) errors, \(published.count) published failures")
            return 1
        }

        guard let line = await probeReadLine(), line.hasPrefix("check "),
              let otherCount = Int(line.dropFirst("check ".count)) else { return 2 }
        let rows = try await store.count(Query<TwoProcessNote>(where: Attribute("writer") == other && Attribute("id") != "shared"))
        let history = try await store.changes(since: start)
        let logged = history.changes.filter {
            $0.entity == TwoProcessNote.entityName && $0.operation == .insert
                && String.fromDatabaseValue($0.key)?.hasPrefix(other + "-") == true
        }.count
        probeEmit("saw \(rows) \(logged)")
        guard rows == otherCount, logged == otherCount else {
            probeEmit("result fail expected \(otherCount) notes of \(other), fetched \(rows), logged \(logged)")
            return 1
        }
        try await store.close()
        probeEmit("result ok")
        return 0
    } catch {
        probeEmit("error \((error as? StrataError)?.code.description ?? "other") \(error)")
        probeEmit("result fail \(error)")
        return 1
    }
}

/// Writes `count` change sets, each committed before the next (so that the two processes'
/// transactions interleave); every tenth also upserts a note both processes write, and every
/// 25th reads. Reports each error a caller sees on stdout and returns how many there were.
private func writeTwoProcessNotes(_ store: Store, writer: String, count: Int) async -> Int {
    var errors = 0
    var first: Double?
    var last = 0.0
    for index in 0..<count {
        if index == count / 2 {
            probeEmit("halfway")
            guard await probeReadLine() == "continue" else { return errors + 1 }
        }
        var changes = ChangeSet()
        changes.insert(TwoProcessNote(id: "\(writer)-\(index)", writer: writer, index: Int64(index),
                                      body: String(repeating: "\(index % 10)", count: 120)))
        if index % 10 == 0 {
            changes.upsert(TwoProcessNote(id: "shared", writer: writer, index: Int64(index), body: "last writer"))
        }
        do {
            try await store.submit(changes).committed()
            let now = Date().timeIntervalSince1970
            if first == nil { first = now }
            last = now
            if index % 25 == 0 { _ = try await store.count(Query<TwoProcessNote>()) }
        } catch {
            errors += 1
            probeEmit("error \((error as? StrataError)?.code.description ?? "other") \(error)")
        }
    }
    do {
        try await store.persist()
    } catch {
        errors += 1
        probeEmit("error \((error as? StrataError)?.code.description ?? "other") \(error)")
    }
    probeEmit("wrote \(count - errors) \(first ?? 0) \(last)")
    return errors
}

/// The failures already published on `stream`. Each one was yielded before the work that caused
/// it returned, so it is buffered: `next()` returns it at once; the bound only ends the wait once
/// the buffer is empty.
private func probeDrain(_ stream: AsyncStream<StrataError>) async -> [StrataError] {
    var collected: [StrataError] = []
    while collected.count < 256 {
        let next = await withTaskGroup(of: StrataError?.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(300))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let next else { break }
        collected.append(next)
    }
    return collected
}

/// Writes one line to stdout at once (stdout is a pipe: no buffering may hold it back).
func probeEmit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Reads one line from stdin off the cooperative pool; nil at EOF.
func probeReadLine() async -> String? {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: readLine(strippingNewline: true)) }
    }
}
