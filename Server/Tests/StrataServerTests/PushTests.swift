import Foundation
import StrataServer
import StrataSyncWire
import Testing

extension ServerTests {
    @Suite struct Push {
        static let article: [String: SyncValue] = ["title": .text("t"), "isRead": .integer(0)]

        @Test func aBatchIsAppliedOnceAndAGapIsRefused() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                let batch = [SyncEntry.upsert(1, Self.article, time: 10), .update([1], ["isRead": .integer(1)], time: 11)]
                let first = try await client.push(device: "d", batch: 1, batch)
                #expect(first.duplicate == false)
                #expect(first.cursor == "2")
                let again = try await client.push(device: "d", batch: 1, batch)
                #expect(again.duplicate == true)
                #expect(again.cursor == "2")
                #expect(try await client.pullAll().entries.count == 2)

                let gap = try await client.send("POST", "/v1/push", json: PushRequest(device: "d", batch: 3, changes: batch))
                #expect(gap.status == 409)
                #expect(gap.error?.error == .batchGap)
                #expect(gap.error?.expected == 2)
                let next = try await client.push(device: "d", batch: 2, [.update([1], ["title": .text("u")], time: 12)])
                #expect(next == PushResponse(batch: 2, duplicate: false, cursor: "3"))
                // Another device numbers its batches from 1.
                #expect(try await client.push(device: "e", batch: 1, [.upsert(2, Self.article, time: 13)]).cursor == "4")
            }
        }

        /// Every refused push leaves the space as it was: no record, no log entry, no batch counted.
        @Test func badPushesAreRefusedWholeWithNothingApplied() async throws {
            let limits = SyncLimits(maxRequestBytes: 64 * 1024, maxEntries: 5, maxIDsPerEntry: 100)
            try await Fixture.with(limits: limits) { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                let good = SyncEntry.upsert(1, Self.article, time: 1)
                func refused(_ changes: [SyncEntry]) async throws -> SyncClient.Answer {
                    try await client.send("POST", "/v1/push", json: PushRequest(device: "d", batch: 1, changes: changes))
                }
                let cases: [(SyncClient.Answer, Int, SyncProtocolError.Code, String)] = [
                    (try await client.send("POST", "/v1/push", body: Data(#"{"device": "d", "batch": 1, "changes": [}"#.utf8)),
                     400, .malformed, "JSON"),
                    (try await client.send("POST", "/v1/push", body: Data(
                        #"{"device": "d", "batch": 1, "changes": [{"entity": "Article", "op": "upsert", "ids": [1], "time": "soon"}]}"#.utf8)),
                     400, .malformed, "changes[0].time"),
                    (try await client.send("POST", "/v1/push", body: Data(
                        #"{"device": "d", "batch": 1, "changes": [{"entity": "Article", "op": "smash", "ids": [1], "time": 1}]}"#.utf8)),
                     400, .malformed, "changes[0].op"),
                    (try await client.send("POST", "/v1/push", body: Data(repeating: 0x20, count: 70 * 1024)),
                     413, .tooLarge, "bytes"),
                    (try await refused(Array(repeating: good, count: 6)), 413, .tooLarge, "changes: 6"),
                    (try await refused([good, .update(Array(0..<101), ["isRead": .integer(1)], time: 2)]),
                     413, .tooLarge, "changes[1].ids"),
                    (try await refused([good, .upsert(2, ["title": .text("x")], time: 2, entity: "Feed")]),
                     422, .unknownEntity, "changes[1].entity"),
                    (try await refused([good, .update([1], ["colour": .text("red")], time: 2)]),
                     422, .unknownAttribute, "changes[1].values.colour"),
                    (try await refused([good, .update([1], ["isRead": .text("yes")], time: 2)]),
                     422, .typeMismatch, "changes[1].values.isRead"),
                    (try await refused([good, .update([1], ["isRead": .real(0.5)], time: 2)]),
                     422, .typeMismatch, "changes[1].values.isRead"),
                    (try await refused([good, .update([1], ["title": .null], time: 2)]),
                     422, .typeMismatch, "changes[1].values.title"),
                    (try await refused([good, .update([1], ["image": .text("not base64!")], time: 2)]),
                     422, .typeMismatch, "changes[1].values.image"),
                    (try await refused([good, SyncEntry(entity: "Tag", op: .delete, ids: SyncIDSet([.integer(3)]), time: 2)]),
                     422, .typeMismatch, "changes[1].ids[0]"),
                    (try await refused([good, SyncEntry(entity: "Article", op: .upsert, ids: SyncIDSet([.integer(3), .integer(4)]),
                                                        values: Self.article, time: 2)]),
                     400, .malformed, "changes[1].ids"),
                ]
                for (answer, status, code, place) in cases {
                    #expect(answer.status == status, "\(code): \(String(decoding: answer.body, as: UTF8.self))")
                    #expect(answer.error?.error == code)
                    #expect(answer.error?.message.contains(place) == true, "\(answer.error?.message ?? "no message")")
                }
                #expect(try await client.pullAll().entries.isEmpty)
                #expect(try await client.records().records.isEmpty)
                // Batch 1 was never counted: it is still the one expected.
                #expect(try await client.push(device: "d", batch: 1, [good]).duplicate == false)
                // Null is a value for an optional attribute; a whole number is a real.
                #expect(try await client.push(device: "d", batch: 2, [.update([1], ["score": .null, "image": .text("AAE=")], time: 3),
                                                                     .update([1], ["score": .integer(4)], time: 4)]).cursor == "3")
            }
        }

        @Test func compactIDSetsTravelAsOneEntry() async throws {
            try await Fixture.with { fixture in
                let client = fixture.client()
                try await client.putSchema(Fixture.schema)
                let ids = Array(Int64(1)...200)
                _ = try await client.push(device: "d", batch: 1, ids.map { .upsert($0, Self.article, time: 1) })
                // The body carries {"deltas": …}, which the server decodes.
                let push = PushRequest(device: "d", batch: 2, changes: [.update(ids, ["isRead": .integer(1)], time: 2)])
                let body = try JSONEncoder().encode(push)
                #expect(String(decoding: body, as: UTF8.self).contains("deltas"))
                #expect(try await client.send("POST", "/v1/push", body: body).status == 200)
                let entries = try await client.pull(after: "200").changes
                #expect(entries.count == 1)
                #expect(entries.first?.ids.keys == ids.map(SyncKey.integer))
                #expect(entries.first?.values == ["isRead": .integer(1)])
            }
        }
    }
}
