import Foundation
import StrataSyncWire
import StrataTestSupport
import Testing

@Suite struct SyncIDSetTests {
    private func roundTrip(_ set: SyncIDSet) throws -> (SyncIDSet, Data) {
        let data = try JSONEncoder().encode(set)
        return (try JSONDecoder().decode(SyncIDSet.self, from: data), data)
    }

    @Test func randomSetsSurviveBothForms() throws {
        var (random, seed) = SeededRandom.forTest("SyncIDSetTests.randomSetsSurviveBothForms")
        for round in 0..<200 {
            let count = random.next(40)
            let keys: [SyncKey] = switch random.next(3) {
            case 0: (0..<count).map { _ in .integer(Int64(bitPattern: random.next()) & Int64.max) }
            case 1: (0..<count).map { _ in .integer(Int64(random.next(1_000)) - 500) }
            default: (0..<count).map { _ in .text("k\(random.next(10_000))") }
            }
            let (decoded, data) = try roundTrip(SyncIDSet(keys))
            let compact = String(decoding: data, as: UTF8.self).contains("deltas")
            // The compact form sorts; the array keeps the order given.
            let expected = compact ? keys.sorted { $0.description.count != $1.description.count
                ? $0.description.count < $1.description.count : $0.description < $1.description } : keys
            #expect(decoded.keys == expected, "seed \(seed), round \(round)")
            let eligible = count >= SyncIDSet.compactThreshold && keys.allSatisfy {
                if case .integer(let value) = $0 { value >= 0 } else { false }
            }
            #expect(compact == eligible, "seed \(seed), round \(round)")
        }
    }

    @Test func tenThousandKeysAmongAHundredThousandStaySmall() throws {
        var (random, seed) = SeededRandom.forTest("SyncIDSetTests.tenThousandKeysAmongAHundredThousandStaySmall")
        var chosen = Set<Int64>()
        while chosen.count < 10_000 { chosen.insert(Int64(random.next(100_000)) + 1) }
        let (decoded, data) = try roundTrip(SyncIDSet(chosen.map(SyncKey.integer)))
        #expect(Set(decoded.keys) == Set(chosen.map(SyncKey.integer)), "seed \(seed)")
        #expect(data.count < 20_000, "seed \(seed): \(data.count) bytes")
    }

    @Test func hostileDeltasAreRefusedWithWhere() throws {
        func decode(_ base64: String) -> String? {
            let json = Data(#"{"deltas":"\#(base64)"}"#.utf8)
            do {
                _ = try JSONDecoder().decode(SyncIDSet.self, from: json)
                return nil
            } catch let error as DecodingError {
                guard case .dataCorrupted(let context) = error else { return "other: \(error)" }
                return context.debugDescription
            } catch {
                return "other: \(error)"
            }
        }
        #expect(decode("not base64!")?.contains("not base64") == true)
        // Eleven continuation bytes: more than 64 bits.
        #expect(decode(Data(repeating: 0xFF, count: 11).base64EncodedString())?.contains("64 bits") == true)
        // A varint cut off at the end.
        #expect(decode(Data([0x05, 0x80]).base64EncodedString())?.contains("cut off") == true)
        // Two keys whose sum passes Int64.max.
        var bytes = Data(repeating: 0xFF, count: 8) + Data([0x7F])
        bytes += bytes
        #expect(decode(bytes.base64EncodedString())?.contains("Int64.max") == true)
    }
}
