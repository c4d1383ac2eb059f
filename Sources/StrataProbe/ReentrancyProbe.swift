import Foundation
import Strata

/// The reentrancy probe's entity.
struct ReentrantNote: Entity, Equatable {
    var id: Int
    var text: String
    var isStarred = false

    static let isResident = true
}

/// A `Database` smuggled out of its closure, to prove that using it afterwards is refused.
/// Only touched on the store's serial queue, inside `read` closures that run one after the other.
nonisolated(unsafe) private var escapedDatabase: Database?

/// `reentrancy DIRECTORY`: runs, one after the other, every reentrant pattern the API allows and
/// every forbidden one it must refuse. Each prints `start NAME` first, then `ok NAME` (allowed,
/// finished, result checked), `refused NAME CODE: MESSAGE` (a typed error, as required), or
/// `wrong NAME: WHAT`. The parent kills the probe after a timeout, so a deadlock shows as the
/// last `start` line without an outcome.
@MainActor
func runReentrancy(arguments: [String]) async -> Int32 {
    guard arguments.count == 1 else { return 2 }
    let directory = arguments[0]
    do {
        let store = try await Store.open(at: directory + "/reentrancy.sqlite", entities: [ReentrantNote.self])
        try await store.write { db in try db.execute("CREATE TABLE IF NOT EXISTS marks (x)") }
        for pattern in ReentrancyPattern.all {
            probeEmit("start \(pattern.name)")
            do {
                if let wrong = try await pattern.run(store, directory) {
                    probeEmit("wrong \(pattern.name): \(wrong)")
                } else {
                    probeEmit("ok \(pattern.name)")
                }
            } catch let error as StrataError {
                probeEmit("refused \(pattern.name) \(error.code): \(error.message)")
            }
        }
        probeEmit("done")
        return 0
    } catch {
        probeEmit("error \(error)")
        return 1
    }
}

/// One pattern: returns nil when its outcome is right, or what went wrong.
@MainActor
struct ReentrancyPattern {
    let name: String
    let run: @MainActor (Store, String) async throws -> String?

    static let all = allowed + forbidden

    // MARK: Allowed: each must finish with the right result.

    static let allowed: [ReentrancyPattern] = [
        ReentrancyPattern(name: "worker-calls-itself-inside-perform") { store, _ in
            let worker = store.makeWorkerContext()
            let nested = try await worker.perform { worker in
                try worker.insert(ReentrantNote(id: 1, text: "outer"))
                let count = try worker.atomically { () throws -> Int in
                    try worker.insert(ReentrantNote(id: 2, text: "inner"))
                    return try worker.objects(matching: Query<ReentrantNote>()).count
                }
                try worker.save()
                return count
            }
            try await store.persist()
            let stored = try await store.count(Query<ReentrantNote>())
            return nested == 2 && stored == 2 ? nil : "saw \(nested) inside, \(stored) stored"
        },
        ReentrancyPattern(name: "nested-atomically-on-main") { store, _ in
            let main = store.mainContext
            try main.atomically {
                try main.atomically { try main.insert(ReentrantNote(id: 3, text: "nested")) }
            }
            try await main.save()?.committed()
            return try await store.fetch(ReentrantNote.self, id: 3) == nil ? "note 3 not stored" : nil
        },
        ReentrancyPattern(name: "submit-inside-write") { store, _ in
            let submission = try await store.write { db -> Submission in
                try db.execute("INSERT INTO marks VALUES (1)")
                var changes = ChangeSet()
                changes.insert(ReentrantNote(id: 4, text: "from write"))
                return try store.submit(changes)
            }
            try await submission.committed()
            return try await store.fetch(ReentrantNote.self, id: 4) == nil ? "note 4 not stored" : nil
        },
        ReentrancyPattern(name: "submit-inside-sql-function") { store, _ in
            try await store.register(SQLFunction("submit_note", argumentCount: 1) { [weak store] arguments in
                var changes = ChangeSet()
                changes.upsert(ReentrantNote(id: Int(Int64.fromDatabaseValue(arguments[0]) ?? 0), text: "from SQL"))
                _ = try store?.submit(changes)
                return .integer(1)
            })
            _ = try await store.read { db in try db.value("SELECT submit_note(5)") }
            try await store.persist()
            return try await store.fetch(ReentrantNote.self, id: 5) == nil ? "note 5 not stored" : nil
        },
        ReentrancyPattern(name: "store-call-from-a-task-started-inside-write") { store, _ in
            let task = try await store.write { _ in
                Task { try await store.read { db in try db.value("SELECT count(*) FROM marks") } }
            }
            let value = try await task.value
            return value == .integer(1) ? nil : "read \(String(describing: value))"
        },
        ReentrancyPattern(name: "nested-savepoints-inside-write") { store, _ in
            struct Undo: Error {}
            try await store.write { db in
                try db.inSavepoint {
                    try db.execute("INSERT INTO marks VALUES (2)")
                    _ = try? db.inSavepoint {
                        try db.execute("INSERT INTO marks VALUES (3)")
                        throw Undo()
                    }
                }
            }
            let marks = try await store.read { db in try db.rows("SELECT x FROM marks ORDER BY x").map { $0.values[0] } }
            return marks == [.integer(1), .integer(2)] ? nil : "marks \(marks)"
        },
        ReentrancyPattern(name: "main-saves-inside-its-change-handler") { store, _ in
            let main = store.mainContext
            var handled = 0
            let observation = main.onChange { change in
                handled += 1
                guard change.origin == .context("worker"), var note = main.object(ReentrantNote.self, id: 6) else { return }
                note.isStarred = true
                try? main.update(note)
                _ = try? main.save()
            }
            defer { observation.cancel() }
            let changes = main.changes()
            let worker = store.makeWorkerContext(name: "worker")
            try await worker.insert(ReentrantNote(id: 6, text: "observed"))
            try await worker.save()
            var seen = 0
            for await _ in changes {
                seen += 1
                if seen == 2 { break }   // the worker's merge, then the handler's own save
            }
            try await store.persist()
            let stored = try await store.fetch(ReentrantNote.self, id: 6)
            return handled == 2 && stored?.isStarred == true ? nil : "handled \(handled), stored \(String(describing: stored))"
        },
    ]

    // MARK: Forbidden: each must fail with a typed error and leave the store working.

    static let forbidden: [ReentrancyPattern] = [
        ReentrancyPattern(name: "commit-inside-write") { store, _ in
            try await store.write { db in
                try db.execute("INSERT INTO marks VALUES (9)")
                try db.execute("COMMIT")
            }
            return "COMMIT ran inside write"
        },
        ReentrancyPattern(name: "begin-inside-read") { store, _ in
            try await store.read { db in try db.executeScript("BEGIN; SELECT 1;") }
            return "BEGIN ran inside read"
        },
        ReentrancyPattern(name: "savepoint-sql-inside-write") { store, _ in
            try await store.write { db in try db.execute("SAVEPOINT mine") }
            return "SAVEPOINT ran inside write"
        },
        ReentrancyPattern(name: "release-of-the-stores-savepoint") { store, _ in
            try await store.write { db in try db.execute("RELEASE SAVEPOINT strata_savepoint_1") }
            return "RELEASE ran inside write"
        },
        ReentrancyPattern(name: "database-used-after-its-closure") { store, _ in
            _ = try await store.read { db in escapedDatabase = db }
            _ = try await store.read { _ in try escapedDatabase?.value("SELECT 1") }
            return "the escaped Database still worked"
        },
        ReentrancyPattern(name: "save-inside-atomically-on-a-worker") { store, _ in
            let worker = store.makeWorkerContext()
            try await worker.perform { worker in
                try worker.atomically {
                    try worker.insert(ReentrantNote(id: 7, text: "half"))
                    _ = try worker.save()
                }
            }
            return "save ran inside atomically"
        },
        ReentrancyPattern(name: "save-inside-atomically-on-main") { store, _ in
            let main = store.mainContext
            try main.atomically {
                try main.insert(ReentrantNote(id: 8, text: "half"))
                _ = try main.save()
            }
            return "save ran inside atomically"
        },
        ReentrancyPattern(name: "submit-after-close") { _, directory in
            let other = try await Store.open(at: directory + "/closed.sqlite", entities: [ReentrantNote.self])
            try await other.close()
            var changes = ChangeSet()
            changes.insert(ReentrantNote(id: 1, text: "late"))
            _ = try other.submit(changes)
            return "a closed store accepted a change set"
        },
        // After the refusals: nothing half-done was kept and the store still takes work.
        ReentrancyPattern(name: "store-still-sound-after-refusals") { store, _ in
            var changes = ChangeSet()
            changes.insert(ReentrantNote(id: 10, text: "after"))
            try await store.submit(changes).committed()
            let ids = try await store.ids(Query<ReentrantNote>(sortedBy: [Attribute("id").ascending]))
            let marks = try await store.read { db in try db.rows("SELECT x FROM marks ORDER BY x").map { $0.values[0] } }
            let problems = try await store.integrityProblems()
            let hasChanges = store.mainContext.hasChanges
            guard ids == [1, 2, 3, 4, 5, 6, 10], marks == [.integer(1), .integer(2)], problems.isEmpty, !hasChanges else {
                return "ids \(ids), marks \(marks), integrity \(problems), main has changes: \(hasChanges)"
            }
            return nil
        },
    ]
}
