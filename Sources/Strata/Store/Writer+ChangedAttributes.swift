import Foundation

/// What an update changed, as the change log names it: the attributes' names, comma-separated,
/// in schema order — the form the update triggers write for other writers.
extension Writer.EntityStatements {
    /// The attributes (the key aside) whose values differ between `row` and `base`, the copy the
    /// save was made on (SQLite's equality, as the triggers' `IS NOT`). Without a base — a save
    /// made with ``ChangeSet``'s API, an upsert — every attribute the save wrote.
    func changedAttributes(_ row: [DatabaseValue], base: [DatabaseValue]?) -> String {
        let count = schema.attributes.count, key = schema.primaryKeyIndex
        let base = base?.count == count ? base : nil
        guard count <= 64 else {
            return attributeList((0..<count).filter { $0 != key && base?[$0] != row[$0] })
        }
        var mask: UInt64 = 0
        for position in 0..<count where position != key {
            if let base, base[position] == row[position] { continue }
            mask |= 1 << UInt64(position)
        }
        if let known = attributeLists[mask] { return known }
        let list = attributeList((0..<count).filter { mask & (1 << UInt64($0)) != 0 })
        attributeLists[mask] = list
        return list
    }

    /// The attributes at `positions`, in schema order, as the log stores them.
    func attributeList(_ positions: [Int]) -> String {
        positions.sorted().map { schema.attributes[$0].name }.joined(separator: ",")
    }
}
