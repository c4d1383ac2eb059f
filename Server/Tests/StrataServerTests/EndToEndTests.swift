import Foundation
import Strata
import StrataServer
import StrataSync
import StrataSyncWire
import Testing

extension ServerTests {
    /// Devices running the real `SyncEngine` with `HTTPSyncTransport` against in-process
    /// service instances on a real PostgreSQL.
    @Suite struct EndToEndTests {
        @Test func threeDevicesConverge() async throws {
            try await Fixture.with { fixture in
                var random = SeededGenerator(test: "EndToEndTests.threeDevicesConverge")
                try await Self.converge(fixture, instances: [0, 0, 0], random: &random)
            }
        }

        @Test func devicesOnTwoInstancesConverge() async throws {
            try await Fixture.with(instances: 2) { fixture in
                var random = SeededGenerator(test: "EndToEndTests.devicesOnTwoInstancesConverge")
                try await Self.converge(fixture, instances: [0, 1, 0, 1], random: &random)
            }
        }

        /// Devices (one per entry of `instances`, on that instance) edit offline and sync in
        /// random orders over several rounds, then all sync twice; they end equal to each other
        /// and to the server, whose records are what the last-writer-wins rule makes of every push,
        /// holding every note never deleted and every uncontested value.
        static func converge(_ fixture: Fixture, instances: [Int], random: inout SeededGenerator) async throws {
            let pushes = PushLog()
            var log = EditLog()
            var nextID = instances.indices.map { Int64($0 * 1000) }
            try await fixture.withDevices(instances.indices.map { "d\($0)" }, instances: instances, log: pushes) { _, devices in
                for _ in 0..<6 {
                    for (index, device) in devices.enumerated() {
                        try await Self.randomEdits(device, nextID: &nextID[index], log: &log, random: &random)
                    }
                    for index in devices.indices.shuffled(using: &random) where random.next() % 3 > 0 {
                        try await devices[index].engine.sync()
                    }
                }
                for _ in 0..<2 { for device in devices { try await device.engine.sync() } }

                let server = try await Self.serverNotes(fixture)
                for device in devices {
                    let local = try await device.notes().mapValues(\.syncValues)
                    #expect(local == server, "device \(device.name) differs from the server")
                }
                #expect(server == (await pushes.model()), "the server's records follow the rule from the pushes")
                #expect(Set(server.keys) == log.survivors, "the notes never deleted, and only those, remain")
                for (id, values) in log.uncontested {
                    for (attribute, value) in values {
                        #expect(server[id]?[attribute] == value, "note \(id).\(attribute), written by one device only")
                    }
                }
                #expect(!log.survivors.isEmpty)
            }
        }

        /// One to four random edits of `device`'s notes, offline: inserts, whole-object saves,
        /// single-attribute updates, bulk updates by IDs, deletes.
        static func randomEdits(_ device: Device, nextID: inout Int64, log: inout EditLog,
                                random: inout SeededGenerator) async throws {
            for _ in 0..<(1 + random.next() % 4) {
                let notes = try await device.notes()
                let known = notes.keys.sorted()
                let choice = random.next() % 10
                if choice < 3 || known.isEmpty {
                    nextID += 1
                    let note = Note(id: nextID, title: "\(device.name)-\(nextID)", isRead: false,
                                    score: Int64(random.next() % 100))
                    try await device.save { $0.insert(note) }
                    log.insert(note, by: device.name)
                    continue
                }
                let id = known[Int(random.next() % UInt64(known.count))]
                switch choice {
                case 3:
                    try await device.save { $0.delete(Note.self, id: id) }
                    log.delete(id)
                case 4, 5:
                    let isRead = random.next() % 2 == 0
                    try await device.save { $0.updateAll(Note.self, ids: [id], set: ["isRead": isRead]) }
                    log.write(id, "isRead", .integer(isRead ? 1 : 0), by: device.name)
                case 6, 7:
                    guard var note = notes[id] else { continue }
                    note.title = "\(device.name)-t\(random.next() % 1000)"
                    let saved = note
                    try await device.save { $0.update(saved) }
                    log.write(saved, by: device.name)
                default:
                    let ids = Array(known.shuffled(using: &random).prefix(1 + Int(random.next() % UInt64(known.count))))
                    let score = Int64(random.next() % 100)
                    try await device.save { $0.updateAll(Note.self, ids: ids, set: ["score": score]) }
                    for id in ids { log.write(id, "score", .integer(score), by: device.name) }
                }
            }
        }

        /// The server's live notes (`GET /v1/records`), by ID.
        static func serverNotes(_ fixture: Fixture, instance: Int = 0) async throws -> [Int64: [String: SyncValue]] {
            var notes: [Int64: [String: SyncValue]] = [:]
            for record in try await fixture.client(instance: instance).records().records.values
            where record.entity == "Note" && !record.deleted {
                guard case .integer(let id) = record.id else { throw ClusterError("a note with key \(record.id)") }
                notes[id] = record.values
            }
            return notes
        }
    }
}
