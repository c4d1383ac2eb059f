/// Rows grouped by a counting sort: every group's rows, in their order, in one array — a slice
/// of it per group, so a level of rows is one allocation, written once, not a scratch buffer
/// copied out into an array (an allocation) per group.
struct RowGroups {
    /// Every group's rows, group after group.
    let rows: [Int]
    /// Where each group's rows end in `rows` (and so where the next group's start).
    private let ends: [Int]

    /// `rows` grouped by `groupOf` (per row, by its place in `rows`, its group below `groups`).
    init<Rows: RandomAccessCollection<Int>>(_ rows: Rows, groupOf: [Int32], groups: Int) where Rows.Index == Int {
        precondition(groupOf.count == rows.count, "rows to group and their groups")
        var ends = [Int](repeating: 0, count: groups + 1)
        ends.withUnsafeMutableBufferPointer { ends in
            groupOf.withUnsafeBufferPointer { groupOf in
                for group in groupOf {
                    precondition(UInt32(bitPattern: group) < UInt32(groups), "row in group \(group) of \(groups)")
                    ends[Int(group) &+ 1] &+= 1
                }
            }
        }
        for group in 0..<groups { ends[group + 1] += ends[group] }
        var next = ends
        self.rows = FreshMemory.array(count: rows.count) { sorted in
            next.withUnsafeMutableBufferPointer { next in
                groupOf.withUnsafeBufferPointer { groupOf in
                    // Every group number was checked above, and `next` stays within its group's room.
                    for place in 0..<groupOf.count {
                        let group = Int(groupOf[place])
                        (sorted.baseAddress! + next[group]).initialize(to: rows[place])
                        next[group] &+= 1
                    }
                }
            }
        }
        self.ends = ends
    }

    /// The rows of group `group`, in their order.
    subscript(group: Int) -> ArraySlice<Int> { rows[ends[group]..<ends[group + 1]] }
}
