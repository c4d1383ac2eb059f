import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// `RowOrder` compares rows in place exactly as `DatabaseValue.compare` orders their values, and
/// its galloping search finds what a linear search finds.
@Suite struct RowOrderTests {
    /// Every storage class, numbers that only an exact integer–real comparison orders right
    /// (around 2^53 and 2^63), NaN, both zeros, and text and blobs that differ in a prefix, a
    /// NUL or a length.
    private static let values: [DatabaseValue] = [
        .null, .integer(0), .integer(-1), .integer(1), .integer(.max), .integer(.min),
        .integer(9_007_199_254_740_993), .real(9_007_199_254_740_992), .real(0), .real(-0.0), .real(0.5),
        .real(-0.5), .real(.nan), .real(.infinity), .real(-.infinity), .real(9_223_372_036_854_775_808.0),
        .real(1), .text(""), .text("a"), .text("ab"), .text("a\u{0}"), .text("b"), .text("\u{E9}"), .text("e\u{301}"),
        .text("sixteen bytes!!!"), .blob(Data()), .blob(Data([0])), .blob(Data([0, 0])), .blob(Data([1])),
        .blob(Data("a".utf8)),
    ]

    /// In a block's contiguous arena and in a table's pages alike.
    @Test(arguments: [false, true])
    func cellsCompareAsTheirValuesDo(paged: Bool) {
        var column = Column()
        var contiguous: [UInt8] = []
        var pages = PagedArena()
        for value in Self.values {
            if paged { column.append(value, arena: &pages) } else { column.append(value, arena: &contiguous) }
        }
        for a in Self.values.indices {
            for b in Self.values.indices {
                let expected = DatabaseValue.compare(Self.values[a], Self.values[b]).signum()
                let cells = (paged ? column.compare(a, b, arena: pages) : column.compare(a, b, arena: contiguous)).signum()
                #expect(cells == expected, "\(Self.values[a]) against \(Self.values[b])")
            }
        }
    }

    @Test func theGallopingSearchFindsWhatALinearSearchFinds() throws {
        var (random, seed) = SeededRandom.forTest("theGallopingSearchFindsWhatALinearSearchFinds")
        let schema = try SchemaRegistry([ListedArticle.self]).schema(for: ListedArticle.self)
        let published = try #require(schema.position(of: "published"))
        let table = ColumnTable(schema: schema)
        for key in 0..<600 {
            // Few dates, integers and reals mixed, so that ties (broken by key) are common.
            let date: DatabaseValue = random.next(2) == 0 ? .integer(Int64(random.next(40))) : .real(Double(random.next(40)) + 0.5)
            _ = table.upsert([.text("k-\(key)"), .integer(Int64(random.next(5))), date, .integer(0)])
        }
        let rows = table.order(by: [(published, false)])
        let sorted = table.liveSlots.sorted(by: rows.precedes)
        // Half of the slots are the ordered list, the rest are placed into it.
        let kept = sorted.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        for slot in sorted where !kept.contains(slot) {
            let start = random.next(kept.count + 1)
            let linear = (start..<kept.count).first { !rows.precedes(kept[$0], slot) } ?? kept.count
            #expect(rows.boundary(of: slot, in: kept, from: start) == linear, "seed \(seed): slot \(slot) from \(start)")
        }
    }

    /// Rows sorted newest first (many dates tied, so the key decides), then left as they are or
    /// disturbed by one swap — of any two rows, or of two tied ones: `holdsInOrder` answers what
    /// comparing each row with the next answers, and says "in order" exactly when nothing was
    /// swapped. Dates all integers or all reals take the page-at-a-time path; mixed, the
    /// comparison's.
    @Test(arguments: ["integers", "reals", "mixed"])
    func rowsInOrderAreToldFromRowsOneSwapDisturbs(dates: String) throws {
        var (random, seed) = SeededRandom.forTest("rowsInOrderAreToldFromRowsOneSwapDisturbs-\(dates)")
        let schema = try SchemaRegistry([ListedArticle.self]).schema(for: ListedArticle.self)
        let published = try #require(schema.position(of: "published"))
        for trial in 0..<60 {
            // Past 4,096 rows now and then, so that the dates span pages.
            let count = trial % 10 == 9 ? 4_200 + random.next(300) : 2 + random.next(300)
            var rows: [[DatabaseValue]] = (0..<count).map { key in
                let date = random.next(20)
                let value: DatabaseValue = switch dates {
                case "integers": .integer(Int64(date))
                case "reals": .real(Double(date) + 0.5)
                default: random.next(2) == 0 ? .integer(Int64(date)) : .real(Double(date))
                }
                return [.text("k-\(key)"), .integer(1), value, .integer(0)]
            }
            let table = ColumnTable(schema: schema)
            for row in rows { _ = table.upsert(row) }
            let reference = table.order(by: [(published, false)])
            rows = table.liveSlots.sorted(by: reference.precedes).map { slot in (0..<4).map { table.value(at: slot, $0) } }
            let swap = trial % 3
            if swap > 0 {
                // Any two rows, or two neighbours with one date (the key then decides).
                let ties = (1..<count).filter { DatabaseValue.compare(rows[$0 - 1][published], rows[$0][published]) == 0 }
                let (a, b) = swap == 2 && !ties.isEmpty
                    ? { let at = ties[random.next(ties.count)]; return (at - 1, at) }()
                    : (random.next(count - 1), count - 1)
                rows.swapAt(a, b)
            }
            var block = ColumnBlock(schema: schema)
            for row in rows { try block.append(row) }
            let order = block.order(by: [(published, false)])
            let oneByOne = (1..<count).allSatisfy { order.precedes($0 - 1, $0) }
            #expect(order.holdsInOrder(count) == oneByOne, "seed \(seed), trial \(trial)")
            #expect(oneByOne == (swap == 0), "seed \(seed), trial \(trial): the swap left the rows in order")
        }
    }
}
