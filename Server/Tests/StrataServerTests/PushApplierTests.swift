@testable import StrataServer
import StrataSyncWire
import Testing

/// `PushApplier` alone (no database): random batches from random devices, checked against a
/// model of the rules, and the effective entries replayed naively reach the same state.
@Suite struct PushApplierTests {
    typealias Key = PushApplier.RecordKey

    @Test func randomBatchesFollowTheRulesAndTheirEffectReplaysToTheSameState() {
        var random = SeededGenerator(test: "PushApplierTests")
        for _ in 0..<200 {
            var applier = PushApplier(records: [:])
            var model: [Int64: (deleted: Bool, fields: [String: (SyncValue, SyncStamp)])] = [:]
            var replayed: [Int64: [String: SyncValue]] = [:]
            for step in 0..<30 {
                let entry = Self.randomEntry(step: step, using: &random)
                let device = ["a", "b", "c"].randomElement(using: &random)!
                let stamp = SyncStamp(time: entry.time, device: device)
                // The model: the rules as the protocol states them.
                for case .integer(let id) in entry.ids.keys {
                    switch entry.op {
                    case .delete:
                        model[id] = (true, [:])
                    case .upsert, .update:
                        guard model[id]?.deleted != true, entry.op == .upsert || model[id] != nil else { continue }
                        var fields = model[id]?.fields ?? [:]
                        for (name, value) in entry.values where fields[name].map({ $0.1 < stamp }) ?? true {
                            fields[name] = (value, stamp)
                        }
                        model[id] = (false, fields)
                    }
                }
                let before = applier.effective.count
                applier.apply(entry, device: device)
                // A client applies the effective entries in order, comparing nothing.
                for effect in applier.effective[before...] {
                    #expect(effect.device == device)
                    for case .integer(let id) in effect.ids.keys {
                        switch effect.op {
                        case .delete: replayed[id] = nil
                        case .upsert: replayed[id, default: [:]].merge(effect.values) { $1 }
                        case .update: replayed[id]?.merge(effect.values) { $1 }
                        }
                    }
                }
            }
            for id in Int64(1)...6 {
                let record = applier.records[Key(entity: "Article", id: String(id))]
                #expect(record?.isDeleted == model[id]?.deleted, "id \(id)")
                #expect(record?.values ?? [:] == (model[id]?.fields.mapValues(\.0) ?? [:]), "id \(id)")
                let live = record.flatMap { $0.isDeleted ? nil : $0.values }
                #expect(replayed[id] == live, "id \(id)")
            }
        }
    }

    static func randomEntry(step: Int, using random: inout SeededGenerator) -> SyncEntry {
        let time = Int64.random(in: 1...20, using: &random)
        let ids = (0..<Int.random(in: 1...4, using: &random)).map { _ in Int64.random(in: 1...6, using: &random) }
        var values: [String: SyncValue] = [:]
        for name in ["title", "isRead", "score"] where Bool.random(using: &random) {
            values[name] = .integer(Int64(step))
        }
        switch Int.random(in: 0..<8, using: &random) {
        case 0: return .delete(ids, time: time)
        case 1...3: return .upsert(ids[0], values.isEmpty ? ["title": .integer(Int64(step))] : values, time: time)
        default: return .update(ids, values.isEmpty ? ["isRead": .integer(Int64(step))] : values, time: time)
        }
    }
}
