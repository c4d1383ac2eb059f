import Foundation
import StrataSyncWire
import Testing

@Suite struct PushValidationTests {
    private let schema = SyncSchema(entities: [
        "Article": .init(keyType: .integer, attributes: [
            "title": .init(type: .text, optional: false),
            "score": .init(type: .real, optional: true),
            "image": .init(type: .blob, optional: true),
        ]),
    ])

    private func refusal(_ json: String, limits: SyncLimits = .default) -> SyncProtocolError? {
        do {
            _ = try PushRequest.decode(Data(json.utf8), limits: limits).validated(against: schema, limits: limits)
            return nil
        } catch {
            return error as? SyncProtocolError
        }
    }

    private func push(_ entries: String) -> String { #"{"device":"d1","batch":1,"changes":[\#(entries)]}"# }

    @Test func aValidPushIsResolvedToTheSchemaTypes() throws {
        let json = push(#"{"entity":"Article","op":"upsert","ids":[1],"values":{"title":"t","score":2,"image":"AAE="},"time":5}"#)
        let request = try PushRequest.decode(Data(json.utf8)).validated(against: schema)
        #expect(request.changes[0].values == ["title": .text("t"), "score": .real(2), "image": .blob(Data([0, 1]))])
    }

    @Test func eachRuleRefusesWithCodeAndPlace() {
        let cases: [(String, SyncProtocolError.Code, String)] = [
            ("{", .malformed, "the body is not JSON"),
            (#"{"device":"d1","batch":1,"changes":[{"entity":"Article","op":"upsert","ids":[1],"time":"x"}]}"#,
             .malformed, "changes[0].time"),
            (push(#"{"entity":"Feed","op":"delete","ids":[1],"time":1}"#), .unknownEntity, "changes[0].entity: Feed"),
            (push(#"{"entity":"Article","op":"update","ids":[1],"values":{"body":"b"},"time":1}"#),
             .unknownAttribute, "changes[0].values.body"),
            (push(#"{"entity":"Article","op":"update","ids":[1],"values":{"title":3},"time":1}"#),
             .typeMismatch, "changes[0].values.title: an integer for Article.title, which is text"),
            (push(#"{"entity":"Article","op":"update","ids":[1],"values":{"title":null},"time":1}"#),
             .typeMismatch, "changes[0].values.title: null"),
            (push(#"{"entity":"Article","op":"delete","ids":["x"],"time":1}"#), .typeMismatch, "changes[0].ids[0]"),
            (push(#"{"entity":"Article","op":"upsert","ids":[1,2],"values":{"title":"t"},"time":1}"#),
             .malformed, "an upsert is of one object"),
            (push(#"{"entity":"Article","op":"delete","ids":[1],"values":{"title":"t"},"time":1}"#),
             .malformed, "a delete sets no value"),
            (#"{"device":"","batch":1,"changes":[]}"#, .malformed, "device"),
            (#"{"device":"d","batch":0,"changes":[]}"#, .malformed, "batch"),
        ]
        for (json, code, place) in cases {
            let error = refusal(json)
            #expect(error?.error == code, "\(json)")
            #expect(error?.message.contains(place) == true, "\(json): \(error?.message ?? "accepted")")
        }
    }

    @Test func limitsRefuseBeforeApplying() {
        let limits = SyncLimits(maxRequestBytes: 200, maxEntries: 1, maxIDsPerEntry: 2)
        #expect(refusal(String(repeating: " ", count: 201), limits: limits)?.error == .tooLarge)
        let two = push(#"{"entity":"Article","op":"delete","ids":[1],"time":1},{"entity":"Article","op":"delete","ids":[2],"time":1}"#)
        #expect(refusal(two, limits: limits)?.error == .tooLarge)
        #expect(refusal(push(#"{"entity":"Article","op":"delete","ids":[1,2,3],"time":1}"#), limits: limits)?.error == .tooLarge)
    }

    @Test func schemasMergeAdditionsAndRefuseChanges() throws {
        let added = SyncSchema(entities: [
            "Article": .init(keyType: .integer, attributes: ["isRead": .init(type: .integer, optional: false)]),
            "Feed": .init(keyType: .text, attributes: [:]),
        ])
        let merged = try schema.merging(added)
        #expect(merged.entities["Article"]?.attributes.keys.sorted() == ["image", "isRead", "score", "title"])
        #expect(merged.entities["Feed"] != nil)
        let changed = SyncSchema(entities: ["Article": .init(keyType: .integer, attributes: ["title": .init(type: .text, optional: true)])])
        #expect(throws: SyncProtocolError.self) { try schema.merging(changed) }
        do {
            _ = try schema.merging(changed)
        } catch let error as SyncProtocolError {
            #expect(error.error == .schemaMismatch)
            #expect(error.message.contains("Article.title: optional text here, text in the space's schema"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func theClockNeverGoesBackAndOrdersAfterWhatItSaw() {
        var clock = HybridClock()
        #expect(clock.stamp(wallMilliseconds: 100) == 100)
        #expect(clock.stamp(wallMilliseconds: 50) == 101)
        clock.observe(500)
        #expect(clock.stamp(wallMilliseconds: 200) == 501)
        #expect(SyncStamp(time: 5, device: "a") < SyncStamp(time: 5, device: "b"))
        #expect(SyncStamp(time: 4, device: "z") < SyncStamp(time: 5, device: "a"))
    }
}
