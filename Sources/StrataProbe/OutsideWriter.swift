import Foundation
import Strata

// `StrataProbe outside-writer <path> <id> <title>`: another process writing a store the test
// process holds open (`OutsideWriteTests`). Opens the store at <path>, sets the title of the note
// <id> through a worker context (its other attributes as this process reads them), commits,
// closes, and prints "result ok" (or "result fail <reason>" with status 1).

/// The entity both processes write. The test declares an identical type (same name, same
/// attributes), so both processes agree on the schema.
private struct OutsideNote: Entity, Equatable {
    var id: String
    var title: String
    var body: String
}

/// Runs the `outside-writer` subcommand with the words after it; returns the exit status.
func runOutsideWriter(arguments: [String]) async -> Int32 {
    guard arguments.count == 3 else {
        probeEmit("result fail usage: outside-writer <path> <id> <title>")
        return 64
    }
    let (path, id, title) = (arguments[0], arguments[1], arguments[2])
    do {
        let store = try await Store.open(at: path, entities: [OutsideNote.self])
        let worker = store.makeWorkerContext(name: "other-process")
        guard var note = try await worker.fetch(Query<OutsideNote>(where: Attribute("id") == id)).first else {
            probeEmit("result fail no note \(id)")
            try await store.close()
            return 1
        }
        note.title = title
        try await worker.update(note)
        try await worker.save()
        try await store.close()
        probeEmit("result ok")
        return 0
    } catch {
        probeEmit("result fail \(error)")
        return 1
    }
}
