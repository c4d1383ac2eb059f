import Foundation
@_spi(Sync) import Strata
@testable import StrataSync
import StrataSyncWire
import StrataTestSupport
import Testing

/// Devices making random offline edits to shared objects, syncing in random orders, end equal
/// to each other and to the server.
@Suite struct ConvergenceTests {
    @Test(arguments: [ConflictPolicy.lastWriterWins, .serverWins, .deviceWins])
    func threeDevicesConverge(policy: ConflictPolicy) async throws {
        var (random, seed) = SeededRandom.forTest("threeDevicesConverge")
        let directory = try TemporaryDirectory()
        let server = InMemorySyncServer()
        var devices: [TestDevice] = []
        for name in ["a", "b", "c"] {
            devices.append(try await TestDevice.open(directory, name, server: server, policy: policy) { $0.pullLimit = 3 })
        }
        var nextID: [Int64] = [0, 1000, 2000]
        for _ in 0..<12 {
            // Each device makes a few edits offline.
            for (index, device) in devices.enumerated() {
                let known = try await device.articles().map(\.id)
                for _ in 0..<(1 + random.next(4)) {
                    let choice = random.next(10)
                    if choice < 3 || known.isEmpty {
                        nextID[index] += 1
                        let id = nextID[index]
                        try await device.save { $0.insert(Article.make(id)) }
                    } else {
                        let id = known[random.next(known.count)]
                        switch choice {
                        case 3: try await device.save { $0.delete(Article.self, id: id) }
                        case 4, 5: try await device.save { $0.updateAll(Article.self, ids: [id], set: ["isRead": random.next(2) == 1]) }
                        case 6, 7: try await device.save { $0.updateAll(Article.self, ids: [id], set: ["title": "t\(random.next(100))"]) }
                        default:
                            let ids = Array(known.shuffled(using: &random).prefix(1 + random.next(known.count)))
                            try await device.save { $0.updateAll(Article.self, ids: ids, set: ["isStarred": random.next(2) == 1]) }
                        }
                    }
                }
                nextMillisecond()
            }
            // Some of them sync, in a random order; some only push (as automatic mode does after
            // a save), so the server gets edits from devices that have not pulled everything.
            for index in Array(devices.indices).shuffled(using: &random) where random.next(3) > 0 {
                if random.next(2) == 0 {
                    try await devices[index].engine.sync()
                } else {
                    try await devices[index].engine.pushAll()
                }
            }
        }
        // Everyone syncs twice: every device has pushed, then pulled everything.
        for _ in 0..<2 { for device in devices { try await device.engine.sync() } }

        let live = await server.liveValues()["Article"] ?? [:]
        let expected = live.map { key, values -> Article in
            guard case .integer(let id) = key, case .text(let title)? = values["title"],
                  case .integer(let read)? = values["isRead"], case .integer(let starred)? = values["isStarred"] else {
                return Article(id: -1, title: "unreadable \(key) \(values)", isRead: false, isStarred: false, summary: nil)
            }
            return Article(id: id, title: title, isRead: read != 0, isStarred: starred != 0, summary: nil)
        }.sorted { $0.id < $1.id }
        for device in devices {
            let articles = try await device.articles()
            #expect(articles == expected, "seed \(seed): device \(device.path) differs from the server")
        }
        #expect(!expected.isEmpty)
        for device in devices { try await device.close() }
    }
}
