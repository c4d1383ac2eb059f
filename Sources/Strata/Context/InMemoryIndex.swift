/// A hash index over one or more attributes of the objects a context holds, so that queries with
/// equality conditions on the index's leading attributes do not scan (e.g. `feedID == 7 &&
/// isRead == false` over the `(feedID, isRead)` index).
struct InMemoryIndex<ID: Hashable & Sendable>: Sendable {
    let positions: [Int]
    /// One map per prefix length: `maps[0]` keys on the first attribute, `maps[1]` on the first two…
    private var maps: [[[DatabaseValue]: Set<ID>]]
    private let types: [AttributeType]

    init(positions: [Int], schema: EntitySchema) {
        self.positions = positions
        self.types = positions.map { schema.attributes[$0].type }
        self.maps = Array(repeating: [:], count: positions.count)
    }

    mutating func insert(_ id: ID, row: some RowSource) {
        var key: [DatabaseValue] = []
        for (level, position) in positions.enumerated() {
            key.append(Self.normalized(row.value(at: position), types[level]))
            maps[level][key, default: []].insert(id)
        }
    }

    mutating func remove(_ id: ID, row: some RowSource) {
        var key: [DatabaseValue] = []
        for (level, position) in positions.enumerated() {
            key.append(Self.normalized(row.value(at: position), types[level]))
            maps[level][key]?.remove(id)
            if maps[level][key]?.isEmpty == true { maps[level][key] = nil }
        }
    }

    /// How many objects match exactly these equalities, when they are all on a prefix of this
    /// index's attributes (and so the index answers alone); nil otherwise.
    func count(exactly equalities: [Int: DatabaseValue]) -> Int? {
        guard !equalities.isEmpty, equalities.count <= positions.count,
              Set(positions.prefix(equalities.count)) == Set(equalities.keys) else { return nil }
        // NULL equals nothing in SQL, while the index keeps NULL keys.
        if equalities.values.contains(where: \.isNull) { return 0 }
        return candidates(equalities)?.count
    }

    /// The IDs whose leading attributes equal the given values, using the longest usable
    /// prefix; nil when the first attribute has no equality condition.
    func candidates(_ equalities: [Int: DatabaseValue]) -> Set<ID>? {
        var key: [DatabaseValue] = []
        for (level, position) in positions.enumerated() {
            guard let value = equalities[position] else { break }
            key.append(Self.normalized(value, types[level]))
        }
        guard !key.isEmpty else { return nil }
        return maps[key.count - 1][key] ?? []
    }

    /// Values that SQLite considers equal hash equal here: numbers take their attribute's class.
    static func normalized(_ value: DatabaseValue, _ type: AttributeType) -> DatabaseValue {
        switch (type.sqlType, value) {
        case ("INTEGER", .real(let real)): return Int64(exactly: real).map(DatabaseValue.integer) ?? value
        case ("REAL", .integer(let int)): return .real(Double(int))
        default: return value
        }
    }
}
