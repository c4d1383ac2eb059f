import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `KeyHash` finds (or locates), adds (where a probe ended, or by probing) and removes slots as a dictionary does, whatever the hashes collide on;
/// `KeyProbe` hashes and equates exactly what `DatabaseValue`'s `==` equates.
@Suite struct KeyHashTests {
    /// Random inserts, removals and lookups against a dictionary model, with hashes drawn from a
    /// few values so that runs are long, wrap around the end of the buckets and are cut by
    /// removals (backward shift) everywhere.
    @Test(arguments: [4, 64, 1 << 20])
    func randomOperationsMatchADictionaryModel(hashes: Int) {
        var (random, seed) = SeededRandom.forTest("\(#function) hashes \(hashes)")
        var table = KeyHash()
        var model: [Int: UInt32] = [:]   // slot → its hash; a slot stands for its key
        // A slot's hash is fixed, as a key's is.
        let hashOf = (0..<2_000).map { _ in UInt32(truncatingIfNeeded: random.next() % UInt64(hashes)) &* 0x9E37_79B1 }
        for step in 0..<20_000 {
            let slot = random.next(hashOf.count)
            switch random.next(3) {
            case 0 where model[slot] == nil:
                if random.next(2) == 0 {
                    table.insert(hashOf[slot], slot: slot)
                } else {
                    // Located first, then put where the probe ended (growing first when full).
                    let (held, bucket) = table.locate(hashOf[slot]) { $0 == slot }
                    #expect(held == nil, "seed \(seed), step \(step): slot \(slot) located before it was inserted")
                    table.insert(hashOf[slot], slot: slot, at: bucket)
                }
                model[slot] = hashOf[slot]
            case 1 where model[slot] != nil:
                table.remove(hashOf[slot], slot: slot)
                model[slot] = nil
            default:
                break
            }
            #expect(table.count == model.count, "seed \(seed), step \(step)")
            let probe = random.next(hashOf.count)
            let found = table.find(hashOf[probe]) { $0 == probe }
            #expect(found == (model[probe] == nil ? nil : probe), "seed \(seed), step \(step): slot \(probe)")
            #expect(table.locate(hashOf[probe]) { $0 == probe }.slot == found, "seed \(seed), step \(step): located \(probe)")
        }
        for slot in hashOf.indices {
            #expect(table.find(hashOf[slot]) { $0 == slot } == (model[slot] == nil ? nil : slot), "seed \(seed): slot \(slot)")
        }
    }

    /// Keys added in one pass (``KeyHash/fill(adding:_:)``) are held as inserts one by one would
    /// hold them, whatever their hashes collide on, and a key already held — by a slot inserted
    /// before the pass or earlier in it — is not added: its holder is answered.
    @Test(arguments: [4, 1 << 20])
    func keysFilledInOnePassAreHeldAsInsertedOnesAndAHeldKeyIsAnswered(hashes: Int) {
        var (random, seed) = SeededRandom.forTest("\(#function) hashes \(hashes)")
        // Slot → its key; a few keys are repeated, so that some slots hold a key another holds.
        let keyOf = (0..<3_000).map { _ in random.next(2_500) }
        let hashOf = (0..<2_500).map { _ in UInt32(truncatingIfNeeded: random.next() % UInt64(hashes)) &* 0x9E37_79B1 }
        var table = KeyHash()
        var holder: [Int: Int] = [:]   // key → the slot that holds it
        for slot in 0..<500 where holder[keyOf[slot]] == nil {
            table.insert(hashOf[keyOf[slot]], slot: slot)
            holder[keyOf[slot]] = slot
        }
        table.fill(adding: 2_500) { filler in
            for slot in 500..<3_000 {
                let key = keyOf[slot]
                let held = filler.insert(hashOf[key], slot: slot) { keyOf[$0] == key }
                #expect(held == holder[key], "seed \(seed): slot \(slot), key \(key)")
                if held == nil { holder[key] = slot }
            }
        }
        #expect(table.count == holder.count, "seed \(seed)")
        for (key, slot) in holder {
            #expect(table.find(hashOf[key]) { keyOf[$0] == key } == slot, "seed \(seed): key \(key)")
        }
    }

    @Test func aReservedTableKeepsItsKeysAndAnEmptiedOneFindsNone() {
        var table = KeyHash(capacity: 3)
        for slot in 0..<1_000 { table.insert(UInt32(slot % 7), slot: slot) }
        table.reserveCapacity(100_000)
        #expect((0..<1_000).allSatisfy { slot in table.find(UInt32(slot % 7)) { $0 == slot } == slot })
        table.removeAll()
        #expect(table.count == 0)
        #expect(table.find(3) { _ in true } == nil)
    }

    private func hash(_ value: DatabaseValue) -> UInt32 { KeyProbe.with(value) { $0.hash } }

    @Test func probesEquateWhatDatabaseValuesEquate() {
        let values: [DatabaseValue] = [
            .integer(1), .integer(-1), .integer(.max), .real(1), .real(0), .real(-0.0), .real(.infinity),
            .text(""), .text("1"), .text("\u{E9}"), .text("e\u{301}"), .text("nul\u{0}byte"), .text("sixteen bytes!!!"),
            .text("sixteen bytes!!?"), .blob(Data()), .blob(Data("1".utf8)), .blob(Data([0, 1, 2, 3, 4, 5, 6, 7, 8])),
        ]
        for a in values {
            for b in values {
                let equal = KeyProbe.with(a) { left in
                    KeyProbe.with(b) { right in left.matches(tag: right.tag, payload: right.payload, bytes: right.bytes) }
                }
                #expect(equal == (a == b), "\(a) against \(b)")
                if a == b { #expect(hash(a) == hash(b), "\(a) and \(b) are equal but hash apart") }
            }
        }
    }
}
