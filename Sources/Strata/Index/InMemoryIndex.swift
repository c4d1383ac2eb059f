/// A hash index over one or more attributes of the objects a context holds, so that queries with
/// equality conditions on the index's leading attributes do not scan (e.g. `feedID == 7 &&
/// isRead == false` over the `(feedID, isRead)` index).
///
/// One map per prefix of the attributes. Keys of one or two values are stored inline and a key
/// held by one object posts it inline, so that an index on an attribute that is nearly unique
/// (a date) costs no allocation per object.
struct InMemoryIndex<ID: Hashable & Sendable>: Sendable {
    /// The values of a prefix of the index's attributes, normalized.
    struct Key: Hashable, Sendable {
        var first: DatabaseValue
        var second: DatabaseValue?
        var rest: [DatabaseValue] = []

        init(_ value: DatabaseValue) { first = value }

        mutating func append(_ value: DatabaseValue) {
            if second == nil { second = value } else { rest.append(value) }
        }
    }

    /// The objects one key reaches.
    enum Postings: Sendable {
        case one(ID)
        case many(Set<ID>)
        /// Distinct IDs listed with no hashing: while the index was built over a block
        /// (``built(positions:schema:over:)``), or posted as new (``insertNew(_:row:)``, whose
        /// IDs no key posts yet, so the list stays distinct). Made a set by the first other change.
        /// A slice: a block's build lists a level's every row in one array (``RowGroups``), a
        /// slice of it per key; a key's first change copies its slice out, and the array lives
        /// until no key's postings are a slice of it.
        case listed(ArraySlice<ID>)

        var ids: [ID] {
            switch self {
            case .one(let id): return [id]
            case .many(let ids): return Array(ids)
            case .listed(let ids): return Array(ids)
            }
        }

        var count: Int {
            switch self {
            case .one: return 1
            case .many(let ids): return ids.count
            case .listed(let ids): return ids.count
            }
        }
    }

    let positions: [Int]
    /// One map per prefix length: `maps[0]` keys on the first attribute, `maps[1]` on the first two…
    private var maps: [[Key: Postings]]
    /// Per level, the class numbers take in the attribute's column (SQLite's affinity).
    let numberClasses: [NumberClass]

    init(positions: [Int], schema: EntitySchema) {
        self.positions = positions
        self.numberClasses = positions.map { schema.attributes[$0].type.numberClass }
        self.maps = Array(repeating: [:], count: positions.count)
    }

    /// Posts `id` under the row's keys, at every level from `first` on (the levels before keep it:
    /// see ``firstLevel(changedBy:)``).
    mutating func insert(_ id: ID, row: some RowSource, fromLevel first: Int = 0) {
        Self.forEachKey(of: row, positions, numberClasses) { level, key in
            if level >= first { Self.add(id, to: &maps[level][key]) }
        }
    }

    /// Posts `id`, which no key posts yet (a slot just claimed for a new row), under the row's
    /// keys: as ``insert(_:row:fromLevel:)`` does, but a key's listed postings stay a list.
    mutating func insertNew(_ id: ID, row: some RowSource) {
        Self.forEachKey(of: row, positions, numberClasses) { level, key in addNew(CollectionOfOne(id), level: level, key: key) }
    }

    /// Posts `ids`, distinct and posted under no key of level `level` yet, under `key`: listed
    /// postings are appended to (no hashing), a set takes each.
    mutating func addNew(_ ids: some Collection<ID>, level: Int, key: Key) {
        Self.addNew(ids, to: &maps[level][key])
    }

    /// Replaces level `level`'s map (what ``built(positions:schema:over:)`` made).
    mutating func setMap(_ map: [Key: Postings], level: Int) { maps[level] = map }

    /// Removes `id` from the row's keys, at every level from `first` on.
    mutating func remove(_ id: ID, row: some RowSource, fromLevel first: Int = 0) {
        Self.forEachKey(of: row, positions, numberClasses) { level, key in
            if level >= first { Self.remove(id, from: &maps[level][key]) }
        }
    }

    /// Moves every object `moves` lists from its key before the update to its key after, at each
    /// level from the first assigned one on where the two differ. Each object is listed once, and
    /// is posted under its key before at every level (so, at a level where the keys differ, under
    /// no key it reaches).
    mutating func apply(_ moves: Moves) {
        for level in moves.firstLevel..<positions.count {
            var leaving: [Key: [ID]] = [:]
            var reaching: [Key: [ID]] = [:]
            for (whole, ids) in moves.groups {
                var before = Key(whole.value(at: 0))
                var after = Key(moves.assigned[0] ?? before.first)
                for prefix in 1..<(level + 1) {
                    let value = whole.value(at: prefix)
                    before.append(value)
                    after.append(moves.assigned[prefix] ?? value)
                }
                guard before != after else { continue }
                leaving[before, default: []].append(contentsOf: ids)
                reaching[after, default: []].append(contentsOf: ids)
            }
            for (key, ids) in leaving { Self.remove(ids, from: &maps[level][key]) }
            for (key, ids) in reaching { Self.addNew(ids, to: &maps[level][key]) }
        }
    }

    /// The first level whose key includes an attribute at one of `changed` positions, nil when
    /// none does: an object whose other attributes change keeps its postings at the levels before.
    func firstLevel(changedBy changed: some Sequence<Int>) -> Int? {
        let changed = Set(changed)
        return positions.firstIndex(where: changed.contains)
    }

    /// The key at `level` of a row whose values `value` reads by attribute position.
    func key(level: Int, _ value: (Int) -> DatabaseValue) -> Key {
        var key = Key(value(positions[0]).normalized(numberClasses[0]))
        for index in positions.indices.dropFirst().prefix(level) {
            key.append(value(positions[index]).normalized(numberClasses[index]))
        }
        return key
    }

    /// Calls `body` with each level and the row's key at that level (the normalized values of the
    /// index's first `level + 1` attributes).
    private static func forEachKey(of row: some RowSource, _ positions: [Int], _ numberClasses: [NumberClass],
                                   _ body: (Int, Key) -> Void) {
        var key: Key?
        for (level, position) in positions.enumerated() {
            let value = row.value(at: position).normalized(numberClasses[level])
            if key == nil { key = Key(value) } else { key!.append(value) }
            body(level, key!)
        }
    }

    // `switch consume`: the postings are moved out of the map's entry, so the set is uniquely
    // referenced while it changes. Switching over the entry itself copied it into a temporary
    // that kept the set alive, so every change copied the whole set: O(n) per insertion or
    // removal, quadratic over a bulk update of a key many objects share (`isStarred == false`).

    private static func add(_ id: ID, to postings: inout Postings?) {
        switch consume postings {
        case nil: postings = .one(id)
        case .one(let other)?: postings = other == id ? .one(id) : .many([other, id])
        case .many(var ids)?:
            ids.insert(id)
            postings = .many(ids)
        case .listed(let ids)?:
            var set = Set(ids)
            set.insert(id)
            postings = .many(set)
        }
    }

    private static func addNew(_ ids: some Collection<ID>, to postings: inout Postings?) {
        switch consume postings {
        case nil: postings = ids.count == 1 ? .one(ids.first!) : .listed(ArraySlice(ids))
        case .one(let other)?: postings = .listed([other] + ids)
        case .listed(var listed)?:
            listed.append(contentsOf: ids)
            postings = .listed(listed)
        case .many(var set)?:
            set.formUnion(ids)
            postings = .many(set)
        }
    }

    /// Removes `ids`, each posted under this key, at once: listed postings stay a list.
    private static func remove(_ ids: [ID], from postings: inout Postings?) {
        switch consume postings {
        case nil: postings = nil
        case .one(let other)?: postings = ids.contains(other) ? nil : .one(other)
        case .many(var set)?:
            set.subtract(ids)
            postings = set.count > 1 ? .many(set) : set.first.map(Postings.one)
        case .listed(let listed)?:
            let gone = Set(ids)
            let kept = listed.filter { !gone.contains($0) }
            postings = kept.count > 1 ? .listed(ArraySlice(kept)) : kept.first.map(Postings.one)
        }
    }

    private static func remove(_ id: ID, from postings: inout Postings?) {
        switch consume postings {
        case nil: postings = nil
        case .one(let other)?: postings = other == id ? nil : .one(other)
        case .many(var ids)?:
            ids.remove(id)
            postings = ids.count == 1 ? .one(ids.first!) : .many(ids)
        case .listed(let ids)?:
            var set = Set(ids)
            set.remove(id)
            postings = set.count == 1 ? .one(set.first!) : .many(set)
        }
    }

    /// How many objects match exactly these equalities, when they are all on a prefix of this
    /// index's attributes (and so the index answers alone); nil otherwise.
    func count(exactly equalities: [Int: DatabaseValue]) -> Int? {
        guard !equalities.isEmpty, equalities.count <= positions.count,
              Set(positions.prefix(equalities.count)) == Set(equalities.keys) else { return nil }
        // NULL equals nothing in SQL, while the index keeps NULL keys.
        if equalities.values.contains(where: \.isNull) { return 0 }
        guard let (level, key) = key(for: equalities) else { return nil }
        return maps[level][key]?.count ?? 0
    }

    /// The IDs whose leading attributes equal the given values (each once), using the longest
    /// usable prefix; nil when the first attribute has no equality condition.
    func candidates(_ equalities: [Int: DatabaseValue]) -> [ID]? {
        guard let (level, key) = key(for: equalities) else { return nil }
        return maps[level][key]?.ids ?? []
    }

    /// The longest prefix of the index's attributes the equalities pin, as a level and a key.
    private func key(for equalities: [Int: DatabaseValue]) -> (Int, Key)? {
        var key: Key?
        var level = -1
        for (index, position) in positions.enumerated() {
            guard let value = equalities[position] else { break }
            let normalized = value.normalized(numberClasses[index])
            if key == nil { key = Key(normalized) } else { key!.append(normalized) }
            level = index
        }
        return key.map { (level, $0) }
    }

    /// Whether an equality with `value` on an attribute of `type` can be decided by a hash lookup
    /// of ``normalized(_:_:)`` keys — the stored values' classes are the type's. Not when SQL would
    /// convert one side first: a number against a TEXT column compares as text, text against an
    /// INTEGER or REAL column as a number (`5 == '5'`); those are left to evaluating the filter.
    static func decidesEquality(_ value: DatabaseValue, in type: AttributeType) -> Bool {
        switch (value, type.sqlType) {
        case (.integer, "TEXT"), (.real, "TEXT"), (.text, "INTEGER"), (.text, "REAL"): return false
        default: return true
        }
    }
}
