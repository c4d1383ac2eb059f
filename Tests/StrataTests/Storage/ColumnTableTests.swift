import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// One attribute of each storage class, and optional ones, for the table's schema.
private struct ColumnTableRow: Entity {
    var id: Int64
    var amount: Int64
    var score: Double
    var name: String
    var payload: Data
    var note: String?
    var rank: Int?
}

/// A `ColumnTable` with the `SlotRecords` the engine keeps beside it, in step as `EntityTable`
/// keeps them: a new key's slot claimed afresh, a written row's version set, free slots added in
/// bulk grown into.
private struct TableWithRecords {
    let table: ColumnTable
    var records = SlotRecords()

    mutating func upsert(_ row: [DatabaseValue], version: UInt64) -> Int {
        let (slot, isNew) = table.claim(row[table.schema.primaryKeyIndex])
        if isNew { records.claim(slot) }
        write(row, at: slot, version: version)
        return slot
    }

    mutating func write(_ row: [DatabaseValue], at slot: Int, version: UInt64) {
        table.write(row, at: slot)
        records.setVersion(version, at: slot)
    }

    mutating func addFreeSlots(_ count: Int) {
        table.addFreeSlots(count)
        records.grow(to: table.slotCount)
    }
}

/// `ColumnTable` holds rows exactly, finds them by key, reuses slots and compacts its arena; with
/// the engine's per-slot records (`SlotRecords`) kept beside it as the engine keeps them, each
/// slot's version, read version and last use follow it; checked against a dictionary model.
@Suite struct ColumnTableTests {
    private func makeTable() throws -> ColumnTable {
        ColumnTable(schema: try SchemaRegistry([ColumnTableRow.self]).schema(for: ColumnTableRow.self))
    }

    /// Equal values with the same bits: `==` equates `-0.0` and `0.0` and never a NaN with itself.
    private func identical(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
        if case .real(let x) = a, case .real(let y) = b { return x.bitPattern == y.bitPattern }
        return a == b
    }

    /// The first attribute where two rows differ (nil when identical): a readable failure where
    /// the rows themselves hold kilobytes of blob.
    private func firstDifference(_ a: [DatabaseValue], _ b: [DatabaseValue]) -> Int? {
        guard a.count == b.count else { return -1 }
        return a.indices.first { !identical(a[$0], b[$0]) }
    }

    // MARK: Model-based

    @Test func randomOperationsMatchADictionaryModel() throws {
        var (random, seed) = SeededRandom.forTest(#function)
        let table = try makeTable()
        var engine = TableWithRecords(table: table)
        let width = table.schema.attributes.count
        let keyIndex = table.schema.primaryKeyIndex
        var rows: [DatabaseValue: [DatabaseValue]] = [:]
        var versions: [DatabaseValue: UInt64] = [:]
        var readVersions: [DatabaseValue: UInt64] = [:]
        var lastUses: [DatabaseValue: UInt64] = [:]
        var compactions = 0

        let words = ["", "a", "\u{E9}", "e\u{301}", "\u{1F600}", "nul\u{0}byte", "\u{0}", "fifteen bytes!!",
                     "sixteen bytes!!!", "\u{4E2D}\u{6587}"]
        func text() -> DatabaseValue {
            switch random.next(4) {
            case 0: return .text(words[random.next(words.count)])
            case 1: return .text(String(repeating: words[random.next(words.count)], count: random.next(400)))
            default: return .text("v\(random.next())")
            }
        }
        let bytes = Data((0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        func blob() -> DatabaseValue {
            let count = random.next(3) == 0 ? random.next(3) : random.next(2_000)
            let start = random.next(bytes.count - count)
            return .blob(Data(bytes[start..<start + count]))
        }
        func anyValue() -> DatabaseValue {
            switch random.next(6) {
            case 0: return .null
            case 1: return .integer(Int64(bitPattern: random.next()))
            case 2: return .real(Double(bitPattern: random.next()))   // any bits: subnormals, infinities, NaNs
            case 3: return text()
            default: return blob()
            }
        }
        func newRow(key: DatabaseValue) -> [DatabaseValue] {
            var row = (0..<width).map { _ in anyValue() }
            if random.next(4) != 0 {   // mostly the attribute's own class, sometimes anything
                row[1] = .integer(random.next(2) == 0 ? .min : Int64(random.next(100)) - 50)
                row[2] = .real(random.next(5) == 0 ? -0.0 : Double(random.next(1_000)) / 7)
                row[3] = text()
                row[4] = blob()
                row[5] = random.next(3) == 0 ? .null : text()
                row[6] = random.next(3) == 0 ? .null : .integer(.max)
            }
            row[keyIndex] = key
            return row
        }
        func randomKey() -> DatabaseValue {
            let number = random.next(400)
            return number % 3 == 0 ? .text("key-\(number)-\u{E9}") : .integer(Int64(number))
        }
        func liveByteCount() -> Int {
            rows.values.joined().reduce(0) { total, value in
                switch value {
                case .text(let text): return total + text.utf8.count
                case .blob(let data): return total + data.count
                default: return total
                }
            }
        }
        func checkEverything(_ step: Int) {
            for (key, row) in rows {
                guard let slot = table.slot(of: key) else {
                    Issue.record("seed \(seed), step \(step): no slot for \(key)")
                    continue
                }
                #expect(table.key(at: slot) == key, "seed \(seed), step \(step)")
                #expect(firstDifference(table.row(at: slot), row) == nil, "seed \(seed), step \(step): row of \(key)")
                let view = table.rowView(at: slot)
                #expect(firstDifference((0..<width).map { view.value(at: $0) }, row) == nil, "seed \(seed), step \(step)")
                #expect(engine.records.version(at: slot) == versions[key], "seed \(seed), step \(step)")
                #expect(engine.records.readVersion(at: slot) == readVersions[key], "seed \(seed), step \(step)")
                #expect(engine.records.lastUse(at: slot) == lastUses[key], "seed \(seed), step \(step)")
            }
            let live = table.liveSlots
            #expect(live.count == rows.count, "seed \(seed), step \(step)")
            #expect(live == live.sorted(), "seed \(seed), step \(step)")
            #expect(Set(live) == Set(rows.keys.compactMap { table.slot(of: $0) }), "seed \(seed), step \(step)")
            #expect(table.arenaByteCount - table.garbageByteCount == liveByteCount(), "seed \(seed), step \(step)")
        }

        for step in 1...20_000 {
            let garbageBefore = table.garbageByteCount
            var clearedAll = false
            let key = randomKey()
            switch random.next(100) {
            case 0..<45:   // upsert: a new key or a new row for an existing one
                let row = newRow(key: key)
                let existing = table.slot(of: key)
                let slot = engine.upsert(row, version: UInt64(step))
                if let existing { #expect(slot == existing, "seed \(seed), step \(step): the key moved") }
                if rows[key] == nil { readVersions[key] = 0; lastUses[key] = 0 }
                rows[key] = row
                versions[key] = UInt64(step)
            case 45..<75:  // remove, existing or missing
                let freed = table.remove(key: key)
                #expect((freed != nil) == (rows[key] != nil), "seed \(seed), step \(step)")
                if let freed { #expect(!table.isLive(at: freed) && table.slot(of: key) == nil, "seed \(seed), step \(step)") }
                rows[key] = nil
                versions[key] = nil
            case 75..<80:
                // New rows from a change set's cells, as a merge writes them: claimed key by key,
                // then written column by column. Rows whose key is held (or claimed earlier in the
                // batch) are not written: their bytes in the cells' page are garbage.
                let batch = (0..<(1 + random.next(12))).map { _ in newRow(key: randomKey()) }
                let cells = try #require(CellRows(batch, attributeCount: width, keyPosition: keyIndex))
                #expect((cells.keys == nil) == (Set(batch.map { $0[keyIndex] }).count < batch.count), "seed \(seed), step \(step)")
                var base: UInt64?
                var taken: [(row: Int, slot: Int)] = []
                for (index, row) in batch.enumerated() {
                    let found = table.find(cells, row: index)
                    #expect(found.slot == table.slot(of: row[keyIndex]), "seed \(seed), step \(step): found by its cells")
                    guard found.slot == nil else { continue }
                    let batchBase = base ?? table.arenaBase(for: cells)
                    base = batchBase
                    let slot = table.claimNew(found, cells: cells, row: index, base: batchBase)
                    engine.records.claim(slot)
                    taken.append((index, slot))
                }
                guard let base else { break }
                table.writeNew(cells, rows: taken.map(\.row), at: taken.map(\.slot), base: base)
                engine.records.wroteNew(at: taken.map(\.slot), version: UInt64(step), firstUse: UInt64(step) * 5)
                for (order, (index, _)) in taken.enumerated() {
                    let key = batch[index][keyIndex]
                    rows[key] = batch[index]
                    versions[key] = UInt64(step)
                    readVersions[key] = 0
                    lastUses[key] = UInt64(step) * 5 + UInt64(order)
                }
            case 80..<99:  // the engine's bookkeeping on an existing row
                guard let slot = table.slot(of: key) else { break }
                engine.records.setReadVersion(UInt64(step), at: slot)
                engine.records.setLastUse(UInt64(step) * 3, at: slot)
                readVersions[key] = UInt64(step)
                lastUses[key] = UInt64(step) * 3
            default:
                // Free slots added in bulk, as a save makes room for its new objects: claimed by
                // the next new keys; nothing a row holds changes.
                if random.next(2) == 0 { engine.addFreeSlots(random.next(6)) }
                if random.next(20) == 0 {
                    table.removeAll()
                    engine.records = SlotRecords()
                    rows.removeAll()
                    versions.removeAll()
                    clearedAll = true
                    #expect(table.arenaByteCount == 0 && table.liveSlots.isEmpty, "seed \(seed), step \(step)")
                }
            }
            if !clearedAll, table.garbageByteCount < garbageBefore {
                compactions += 1
                #expect(table.garbageByteCount == 0, "seed \(seed), step \(step): compaction leaves no garbage")
            }
            #expect(table.count == rows.count, "seed \(seed), step \(step)")
            // Garbage never outgrows both the threshold and the live bytes.
            #expect(table.garbageByteCount <= max(ColumnTable.compactionThreshold, table.arenaByteCount / 2),
                    "seed \(seed), step \(step): garbage is not being compacted")
            if step % 500 == 0 { checkEverything(step) }
        }
        checkEverything(20_001)
        #expect(compactions >= 3, "seed \(seed): only \(compactions) compactions")
    }

    // MARK: Slots

    @Test func freeSlotsAddedInBulkAreClaimedLowestFirstByNewKeys() throws {
        let table = try makeTable()
        var engine = TableWithRecords(table: table)
        func row(_ id: Int64) -> [DatabaseValue] {
            [.integer(id), .integer(id), .real(0.5), .text("n\(id)"), .blob(Data([7])), .null, .null]
        }
        let first = engine.upsert(row(1), version: 1)
        engine.addFreeSlots(3)
        #expect(table.count == 1 && table.liveSlots == [first])
        #expect((0..<4).filter(table.isLive) == [first])
        // An existing key keeps its slot; new keys take the added slots in ascending order.
        #expect(engine.upsert(row(1), version: 2) == first)
        let claimed = (2...4).map { engine.upsert(row(Int64($0)), version: 3) }
        #expect(claimed == [first + 1, first + 2, first + 3])
        #expect(claimed.allSatisfy { engine.records.readVersion(at: $0) == 0 && engine.records.lastUse(at: $0) == 0 && engine.records.version(at: $0) == 3 })
        #expect((2...4).allSatisfy { table.row(at: table.slot(of: .integer(Int64($0)))!) == row(Int64($0)) })
        #expect(table.count == 4 && table.liveSlots == [first] + claimed)
    }

    /// A merge gives each of its saves a slot up front and drops the ones no new key claimed:
    /// only what the free list lacks is added, and only trailing free slots from the first added
    /// one go — a slot freed earlier (or by the merge itself, before the added ones) stays free.
    @Test func slotsProvidedForSavesAndNotClaimedAreDropped() throws {
        let table = try makeTable()
        var engine = TableWithRecords(table: table)
        func row(_ id: Int64) -> [DatabaseValue] {
            [.integer(id), .integer(id), .real(0.5), .text("n\(id)"), .blob(Data([7])), .null, .null]
        }
        for id: Int64 in 1...4 { _ = engine.upsert(row(id), version: 1) }
        let freed = try #require(table.remove(key: .integer(2)))
        // One free slot already: 5 saves need 4 more.
        let first = table.provideFreeSlots(5)
        #expect(first == 4 && table.slotCount == 8)
        let claimed = (10...12).map { table.claim(table.find(.integer($0))) }
        #expect(claimed == [4, 5, 6], "added slots are claimed first, lowest first")
        engine.records.grow(to: table.slotCount)
        for (id, slot) in zip(10..., claimed) {
            engine.records.claim(slot)
            engine.write(row(Int64(id)), at: slot, version: 2)
        }
        table.remove(at: claimed[2])
        table.dropFreeSlots(from: first)
        #expect(table.slotCount == 6, "slot 7 (never claimed) and slot 6 (freed since) dropped")
        #expect(!table.isLive(at: freed) && table.count == 5)
        // The slot freed before stays on the free list: the next new key takes it.
        #expect(engine.upsert(row(20), version: 3) == freed)
        #expect(engine.upsert(row(21), version: 3) == 6, "then a new slot at the end")
        // Nothing to drop when nothing was added.
        let none = table.provideFreeSlots(0)
        table.dropFreeSlots(from: none)
        #expect(table.slotCount == 7 && table.count == 7)
        #expect((1...21).compactMap { table.slot(of: .integer($0)) }.map(table.row(at:)).count == 7)
    }

    @Test func aRemovedSlotIsReusedWithFreshBookkeeping() throws {
        let table = try makeTable()
        var engine = TableWithRecords(table: table)
        func row(_ id: Int64, _ name: String) -> [DatabaseValue] {
            [.integer(id), .integer(id * 10), .real(1.5), .text(name), .blob(Data([1, 2])), .null, .integer(id)]
        }
        let first = engine.upsert(row(1, "one"), version: 1)
        let second = engine.upsert(row(2, "two"), version: 2)
        let third = engine.upsert(row(3, "three"), version: 3)
        #expect(Set([first, second, third]).count == 3)
        engine.records.setReadVersion(2, at: second)
        engine.records.setLastUse(99, at: second)

        // An existing key keeps its slot and the engine's bookkeeping; only the version moves.
        #expect(engine.upsert(row(2, "TWO"), version: 5) == second)
        #expect(engine.records.version(at: second) == 5 && engine.records.readVersion(at: second) == 2 && engine.records.lastUse(at: second) == 99)
        #expect(table.value(at: second, 3) == .text("TWO"))

        #expect(table.remove(key: .integer(2)) == second)
        #expect(table.remove(key: .integer(2)) == nil)
        #expect(table.slot(of: .integer(2)) == nil)
        #expect(table.count == 2 && table.liveSlots == [first, third])

        let reused = engine.upsert(row(4, "four"), version: 7)
        #expect(reused == second)
        #expect(table.key(at: reused) == .integer(4))
        #expect(engine.records.version(at: reused) == 7 && engine.records.readVersion(at: reused) == 0 && engine.records.lastUse(at: reused) == 0)
        #expect(table.row(at: reused) == row(4, "four"))
        #expect(table.count == 3 && table.liveSlots == [first, second, third])
        // The replaced and removed bytes are garbage ("two" and its blob, then "TWO" and its blob);
        // the rest is what the three live rows hold.
        #expect(table.garbageByteCount == 3 + 2 + 3 + 2)
        #expect(table.arenaByteCount - table.garbageByteCount == "one".utf8.count + "three".utf8.count + "four".utf8.count + 3 * 2)

        let fourth = engine.upsert(row(5, "five"), version: 8)
        #expect(fourth == third + 1)
    }

    // MARK: Exact values

    @Test func edgeValuesRoundTripExactly() throws {
        let table = try makeTable()
        let signalingNaN = Double(bitPattern: 0x7FF0_0000_0000_0001)
        let values: [DatabaseValue] = [
            .null, .integer(.min), .integer(.max), .integer(0), .integer(-1),
            .real(-0.0), .real(0.0), .real(.infinity), .real(-.infinity), .real(.leastNonzeroMagnitude),
            .real(-.greatestFiniteMagnitude), .real(1.0 / 3.0), .real(.nan), .real(signalingNaN),
            .text(""), .text("\u{0}"), .text("a\u{0}b"), .text("\u{E9}"), .text("e\u{301}"), .text("\u{1F468}\u{200D}\u{1F469}"),
            .text("fifteen bytes!!"), .text("sixteen bytes!!!"), .text(String(repeating: "\u{4E2D}x", count: 10_000)),
            .blob(Data()), .blob(Data([0])), .blob(Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })),
        ]
        // Every value in every non-key attribute, whatever the attribute's type: the storage class is the value's.
        var id: Int64 = 0
        var placed: [(slot: Int, row: [DatabaseValue])] = []
        for value in values {
            for attribute in 1..<table.schema.attributes.count {
                id += 1
                var row = [DatabaseValue](repeating: .null, count: table.schema.attributes.count)
                row[table.schema.primaryKeyIndex] = .integer(id)
                row[attribute] = value
                let slot = table.upsert(row)
                #expect(firstDifference(table.row(at: slot), row) == nil, "\(value) in attribute \(attribute)")
                placed.append((slot, row))
            }
        }
        for (slot, row) in placed { #expect(firstDifference(table.row(at: slot), row) == nil, "\(slot)") }
        #expect(table.value(at: placed[5].slot, 0) == .integer(6))
        let negativeZero = table.upsert([.integer(-1), .integer(0), .real(-0.0), .text(""), .blob(Data()), .null, .null])
        guard case .real(let zero) = table.value(at: negativeZero, 2) else {
            Issue.record("-0.0 came back as another storage class")
            return
        }
        #expect(zero.sign == .minus && zero == 0)
        #expect(table.value(at: negativeZero, 1) == .integer(0) && table.value(at: negativeZero, 3) == .text("")
                && table.value(at: negativeZero, 4) == .blob(Data()))

        // Keys are compared byte for byte: "é" and "e" + U+0301 are two rows, NUL is part of a key.
        let keys: [DatabaseValue] = [.text("\u{E9}"), .text("e\u{301}"), .text("a"), .text("a\u{0}"), .text(""),
                                     .integer(1), .real(1)]
        for (index, key) in keys.enumerated() {
            var row = [DatabaseValue](repeating: .text("k\(index)"), count: table.schema.attributes.count)
            row[table.schema.primaryKeyIndex] = key
            table.upsert(row)
        }
        let keySlots = keys.compactMap { table.slot(of: $0) }
        #expect(Set(keySlots).count == keys.count)
        for (index, slot) in keySlots.enumerated() {
            #expect(identical(table.key(at: slot), keys[index]))
            #expect(table.value(at: slot, 3) == .text("k\(index)"))
        }
    }
}
