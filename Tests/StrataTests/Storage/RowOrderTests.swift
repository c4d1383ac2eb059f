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
            _ = table.upsert([.text("k-\(key)"), .integer(Int64(random.next(5))), date, .integer(0)], version: 1)
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
}
