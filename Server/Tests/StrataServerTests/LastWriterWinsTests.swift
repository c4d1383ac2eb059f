import Foundation
import StrataServer
import StrataSyncWire
import Testing

extension ServerTests {
    @Suite struct LastWriterWins {
        @Test func differentAttributesBothSurvive() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                _ = try await client.push(device: "a", batch: 1, [.upsert(1, ["title": .text("t0"), "isRead": .integer(0)], time: 10)])
                // B's edit of the title is older than A's edit of isRead, but they do not conflict.
                _ = try await client.push(device: "a", batch: 2, [.update([1], ["isRead": .integer(1)], time: 30)])
                _ = try await client.push(device: "b", batch: 1, [.update([1], ["title": .text("t1")], time: 20)])
                let record = try #require(try await client.records().records["Article/1"])
                #expect(record.values == ["title": .text("t1"), "isRead": .integer(1)])
            }
        }

        @Test func theGreaterTimeThenDeviceWinsAndOnlyWinnersAreLogged() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                _ = try await client.push(device: "m", batch: 1, [.upsert(1, ["title": .text("first"), "isRead": .integer(0)], time: 50)])
                // Older: loses on both attributes, so nothing is logged.
                let older = try await client.push(device: "z", batch: 1, [.update([1], ["title": .text("old"), "isRead": .integer(1)], time: 40)])
                #expect(older.cursor == "1")
                // Same time, smaller device: loses; same time, greater device: wins.
                _ = try await client.push(device: "a", batch: 1, [.update([1], ["title": .text("a")], time: 50)])
                _ = try await client.push(device: "n", batch: 1, [.update([1], ["title": .text("n"), "isRead": .integer(1)], time: 50)])
                // Partly newer: only the winning attribute is logged.
                _ = try await client.push(device: "b", batch: 1, [.update([1], ["title": .text("b"), "isRead": .integer(0)], time: 60),
                                                                 .upsert(1, ["isRead": .integer(1), "title": .text("late")], time: 55)])
                let entries = try await client.pullAll().entries
                #expect(entries.map(\.device) == ["m", "n", "b"])
                #expect(entries.map(\.values) == [["title": .text("first"), "isRead": .integer(0)],
                                                  ["title": .text("n"), "isRead": .integer(1)],
                                                  ["title": .text("b"), "isRead": .integer(0)]])
                #expect(try await client.records().records["Article/1"]?.values == ["title": .text("b"), "isRead": .integer(0)])
            }
        }

        @Test func aBulkUpdateSplitsByWhatWon() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                _ = try await client.push(device: "a", batch: 1, (1...4).map { .upsert($0, ["title": .text("t"), "isRead": .integer(0)], time: 10) })
                _ = try await client.push(device: "a", batch: 2, [.update([3], ["isRead": .integer(5)], time: 30)])
                // IDs 1, 2, 4 take both attributes; 3 keeps its newer isRead; 9 does not exist.
                _ = try await client.push(device: "b", batch: 1, [.update([1, 2, 3, 4, 9], ["title": .text("u"), "isRead": .integer(1)], time: 20)])
                let entries = try await client.pull(after: "5").changes
                #expect(entries.count == 2)
                #expect(entries.first?.ids.keys == [.integer(1), .integer(2), .integer(4)])
                #expect(entries.first?.values == ["title": .text("u"), "isRead": .integer(1)])
                #expect(entries.last?.ids.keys == [.integer(3)])
                #expect(entries.last?.values == ["title": .text("u")])
                #expect(try await client.records().records["Article/9"] == nil)
            }
        }

        @Test func aDeleteWinsOverEveryUpdateAndIDsAreNotReused() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                _ = try await client.push(device: "a", batch: 1, [.upsert(1, ["title": .text("t"), "isRead": .integer(0)], time: 10)])
                _ = try await client.push(device: "a", batch: 2, [.delete([1, 2], time: 11)])
                // Later updates and re-inserts of a deleted ID are dropped; a second delete too.
                let late = try await client.push(device: "b", batch: 1, [
                    .update([1], ["isRead": .integer(1)], time: 100),
                    .upsert(1, ["title": .text("again"), "isRead": .integer(1)], time: 101),
                    .upsert(2, ["title": .text("never seen"), "isRead": .integer(1)], time: 102),
                    .delete([1], time: 103),
                ])
                #expect(late.cursor == "2")
                let entries = try await client.pullAll().entries
                #expect(entries.map(\.op) == [.upsert, .delete])
                #expect(entries.last?.ids.keys == [.integer(1), .integer(2)])
                let records = try await client.records().records
                #expect(records["Article/1"]?.deleted == true)
                #expect(records["Article/2"]?.deleted == true)
            }
        }

        @Test func textKeysWork() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                let tag = SyncEntry(entity: "Tag", op: .upsert, ids: SyncIDSet([.text("swift/linux")]),
                                    values: ["name": .text("Swift")], time: 1)
                _ = try await client.push(device: "a", batch: 1, [tag])
                #expect(try await client.records().records["Tag/swift/linux"]?.id == .text("swift/linux"))
                #expect(try await client.pullAll().entries.first?.ids.keys == [.text("swift/linux")])
            }
        }
    }
}
