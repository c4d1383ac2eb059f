/// A bulk update's moves in one index, made at once when the update has been merged.
///
/// Every object a bulk update changes takes the same values, so its key after the update is its
/// key before with the assigned attributes' values in place. The objects are listed under their
/// whole key before (read before their cells are written): one hash of a small map per object.
/// Then, level by level, each key they leave loses them and each key they reach gains them in
/// one change of its postings — where moving them one by one looked up two keys of the index's
/// large maps per object and level, and made a listed posting a set at its first change.
extension InMemoryIndex {
    struct Moves {
        /// The first level whose key holds an assigned attribute: the levels before keep every object.
        let firstLevel: Int
        /// Per level, the value (normalized) the update assigns to that level's attribute, if any.
        let assigned: [DatabaseValue?]
        /// The objects changed, by their whole key (every level's value) before the update.
        fileprivate(set) var groups: [Key: [ID]] = [:]
    }

    /// The moves of an update that assigns `assignments` (attribute positions and values); nil
    /// when it assigns none of the index's attributes.
    func moves(assigning assignments: [(position: Int, value: DatabaseValue)]) -> Moves? {
        var assigned = [DatabaseValue?](repeating: nil, count: positions.count)
        for (level, position) in positions.enumerated() {
            if let value = assignments.first(where: { $0.position == position })?.value {
                assigned[level] = value.normalized(numberClasses[level])
            }
        }
        guard let first = assigned.firstIndex(where: { $0 != nil }) else { return nil }
        return Moves(firstLevel: first, assigned: assigned)
    }

    /// Lists `id`, whose row is about to take the update's values, under its whole key now.
    func record(_ id: ID, row: some RowSource, in moves: inout Moves) {
        moves.groups[key(level: positions.count - 1) { row.value(at: $0) }, default: []].append(id)
    }
}

extension InMemoryIndex.Key {
    /// The value at `level` (the first is level 0).
    func value(at level: Int) -> DatabaseValue {
        switch level {
        case 0: return first
        case 1: return second!
        default: return rest[level - 2]
        }
    }
}
