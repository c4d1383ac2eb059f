import Foundation
import Strata
import StrataServer
import StrataSync
import StrataSyncWire
import Testing

extension ServerTests.EndToEndTests {
    /// Automatic mode: a device parked in a long poll gets another device's save without a
    /// poll interval, and the other device's debounced push sends it without a `sync()` call.
    @Test func automaticModeDeliversASave() async throws {
        try await Fixture.with { fixture in
            try await fixture.withDevices(["a", "b"]) { _, devices in
                let (a, b) = (devices[0], devices[1])
                try await a.engine.sync()
                let events = await b.engine.events()
                await b.engine.start()
                try await fixture.servers[0].waitForWaiters(1)
                await a.engine.start()
                try await a.save { $0.insert(Note(id: 7, title: "seven", isRead: false, score: 7)) }
                _ = try await firstEvents(of: events, count: 1) {
                    if case .pulled(let changes) = $0 { changes > 0 } else { false }
                }
                #expect(try await b.notes()[7] == Note(id: 7, title: "seven", isRead: false, score: 7))
            }
        }
    }

    /// A bulk update by IDs is one entry in the server's log, and the other device applies it.
    @Test func bulkUpdateTravelsAsOneChange() async throws {
        try await Fixture.with { fixture in
            try await fixture.withDevices(["a", "b"]) { _, devices in
                let (a, b) = (devices[0], devices[1])
                let ids = Array(Int64(1)...300)
                try await a.save { for id in ids { $0.insert(Note(id: id, title: "n\(id)", isRead: false, score: id)) } }
                try await a.engine.sync()
                try await b.engine.sync()
                let (_, cursor) = try await fixture.client().pullAll()
                try await a.save { $0.updateAll(Note.self, ids: ids, set: ["isRead": true]) }
                try await a.engine.sync()

                let entries = try await fixture.client().pullAll(after: cursor).entries
                #expect(entries.count == 1, "\(entries.count) entries for one bulk update")
                #expect(entries.first?.op == .update && Set(entries.first?.ids.keys ?? []) == Set(ids.map(SyncKey.integer)))
                try await b.engine.sync()
                let notes = try await b.notes()
                #expect(notes.count == 300 && notes.values.allSatisfy(\.isRead))
            }
        }
    }
}
