@testable import Strata
import StrataTestSupport
import Testing

/// `RowGroups` — an index level's counting sort — lists every group's rows in their order, one
/// slice per group, the slices together every row once: checked against grouping by filter.
@Suite struct RowGroupsTests {
    /// The groups made by filtering `rows` once per group: what `RowGroups` must equal.
    private func model(_ rows: [Int], groupOf: [Int32], groups: Int) -> [[Int]] {
        (0..<groups).map { group in rows.indices.filter { groupOf[$0] == Int32(group) }.map { rows[$0] } }
    }

    @Test func everyGroupsRowsAreListedInTheirOrder() {
        var (random, seed) = SeededRandom.forTest(#function)
        for round in 0..<40 {
            let context = Comment(rawValue: "seed \(seed), round \(round)")
            let count = random.next(3) == 0 ? random.next(4) : 1 + random.next(3_000)
            let groups = 1 + random.next(round % 4 == 0 ? 2 : 300)
            // Some groups stay empty: every row may fall in one group, or in a few of many.
            let used = 1 + random.next(groups)
            let groupOf = (0..<count).map { _ in Int32(random.next(used)) }
            // A block's rows (a range from 0) or a merge's slots (any distinct numbers).
            let rows = round.isMultiple(of: 2) ? Array(0..<count) : (0..<count).map { $0 * 5 + random.next(5) }
            let grouped = round.isMultiple(of: 2)
                ? RowGroups(0..<count, groupOf: groupOf, groups: groups)
                : RowGroups(rows, groupOf: groupOf, groups: groups)
            let expected = model(rows, groupOf: groupOf, groups: groups)
            #expect((0..<groups).map { Array(grouped[$0]) } == expected, context)
            #expect(grouped.rows.count == count, context)
            #expect((0..<groups).reduce(0) { $0 + grouped[$1].count } == count, context)
        }
    }
}
