/// An inverted index of one entity's full-text attributes: for every token, the slots of the rows
/// that hold it. It answers `.matches` on the main context without tokenizing any row at query time.
///
/// What it answers is exactly what ``ResolvedFilter`` evaluates row by row: a row matches when
/// *every* term matches a token of the union of the tokens (``FullText/tokens(of:)``) of its
/// full-text attributes' text values — NULL and non-text values contribute nothing — an exact term
/// by `==` on the folded token, a prefix term by `String.hasPrefix`; no terms match nothing.
///
/// It is a value with copy-on-write storage in two levels: tokens are spread by hash over
/// ``shardCount`` dictionaries, each a copy-on-write value of its own, so copying the index (as a
/// merge prepared on another thread does) copies one small array, and the first write to a copy
/// copies that array and the one shard it writes to — never every token.
///
/// Prefix terms read a sorted list of the distinct tokens. It is kept lazily: writes only note
/// which tokens appeared or vanished, and the first prefix query after them merges the notes into
/// the list, once, under a lock (so copies read from several threads stay safe).
///
/// Slots are non-negative and below 2³² (a context's table holds far fewer rows).
struct FullTextIndex: Sendable {
    /// The token → slots table of one shard; each posting list is ascending and never empty.
    private typealias Postings = [String: [UInt32]]

    /// How many dictionaries the tokens are spread over: a write after a copy copies one of them.
    static let shardCount = 256

    /// The row positions of the full-text attributes, read from every row given.
    let positions: [Int]
    private var shards: [Postings]
    /// The distinct tokens, ascending, as of the last merge; nil when it must be built from the
    /// shards' keys (after a bulk build, or when the notes grew too long to be worth merging).
    private var sortedBase: [String]? = []
    /// Tokens held now and missing from ``sortedBase``…
    private var added: Set<String> = []
    /// …and tokens of ``sortedBase`` held no more.
    private var removed: Set<String> = []
    /// The merged sorted list for exactly the tokens held now, once a prefix query built it. Copies
    /// holding the same tokens share it; a write that changes the tokens never fills a shared one.
    private var order = Locked<[String]?>(nil)

    /// An empty index of the attributes at `positions`.
    init(positions: [Int]) {
        self.positions = positions
        shards = Array(repeating: [:], count: Self.shardCount)
    }

    // MARK: Writes

    /// Indexes the row in `slot`. The slot must hold no row in the index (a row is removed before
    /// its slot is reused).
    mutating func insert(_ slot: Int, row: some RowSource) {
        let value = UInt32(slot)
        for position in positions {
            guard case .text(let text) = row.value(at: position) else { continue }
            for token in FullText.tokens(of: text) { add(token, value) }
        }
    }

    /// Removes the row in `slot`; `row` is the row as it was indexed (its tokens are the ones removed).
    mutating func remove(_ slot: Int, row: some RowSource) {
        let value = UInt32(slot)
        for position in positions {
            guard case .text(let text) = row.value(at: position) else { continue }
            for token in FullText.tokens(of: text) { erase(token, value) }
        }
    }

    /// Reindexes the row in `slot` from `old` (as it was indexed) to `new`, touching only the
    /// tokens one holds and the other does not; nothing when the full-text values are equal.
    mutating func replace(_ slot: Int, old: some RowSource, new: some RowSource) {
        guard positions.contains(where: { old.value(at: $0) != new.value(at: $0) }) else { return }
        let (before, after) = (tokens(of: old), tokens(of: new))
        let value = UInt32(slot)
        for token in before where !after.contains(token) { erase(token, value) }
        for token in after where !before.contains(token) { add(token, value) }
    }

    /// The index of the rows in `slots`, ascending, built in one pass for a first load: tokens are
    /// gathered by their bytes (``FullTextTokenTable``), each token's slots appended in ascending
    /// order, so a token a row holds twice is listed once without a set per row; a `String` is
    /// made and hashed once per distinct token; the sorted token list waits for the first prefix query.
    static func built<Row: RowSource>(positions: [Int], slots: some Sequence<Int>, row: (Int) -> Row) -> FullTextIndex {
        var table = FullTextTokenTable()
        var scratch: [UInt8] = []
        for slot in slots {
            let source = row(slot)
            let value = UInt32(slot)
            for position in positions {
                guard case .text(let text) = source.value(at: position) else { continue }
                FullText.forEachToken(of: text, scratch: &scratch) { table.append(value, to: $0) }
            }
        }
        var index = FullTextIndex(positions: positions)
        if table.count >= shardCount {
            let perShard = table.count / shardCount + table.count / (4 * shardCount)
            for shard in index.shards.indices { index.shards[shard].reserveCapacity(perShard) }
        }
        for (id, posting) in table.postings.enumerated() {
            let token = table.token(id)
            let shard = shard(of: token)
            // A canonically equivalent spelling of a token already placed: one list, as `==` has it.
            if let held = index.shards[shard].updateValue(posting, forKey: token) {
                index.shards[shard][token] = union([held, posting])
            }
        }
        index.sortedBase = nil
        return index
    }

    private mutating func add(_ token: String, _ slot: UInt32) {
        if Self.insert(slot, into: &shards[Self.shard(of: token)][token, default: []]) { noteAppeared(token) }
    }

    private mutating func erase(_ token: String, _ slot: UInt32) {
        if Self.erase(slot, from: &shards[Self.shard(of: token)][token]) { noteVanished(token) }
    }

    /// The distinct tokens of `row`'s full-text values.
    private func tokens(of row: some RowSource) -> Set<String> {
        var tokens: Set<String> = []
        for position in positions {
            if case .text(let text) = row.value(at: position) { tokens.formUnion(FullText.tokens(of: text)) }
        }
        return tokens
    }

    // MARK: Queries

    /// The slots of the rows that match every one of `terms`, ascending; none when `terms` is
    /// empty. Exact terms are looked up; a prefix term reads the range of the sorted tokens that
    /// begin with it. Terms are intersected from the rarest, and an absent term ends the search.
    func slots(matching terms: [FullTextTerm]) -> [Int] {
        guard !terms.isEmpty else { return [] }
        let sorted = terms.contains(where: \.isPrefix) ? sortedTokens() : []
        // Per term, the posting lists of the tokens it matches and their total length.
        var lists: [(postings: [[UInt32]], size: Int)] = []
        for term in terms {
            var postings: [[UInt32]] = []
            if term.isPrefix {
                for token in sorted[Self.prefixRange(term.token, in: sorted)] where token.hasPrefix(term.token) {
                    if let posting = shards[Self.shard(of: token)][token] { postings.append(posting) }
                }
            } else if let posting = shards[Self.shard(of: term.token)][term.token] {
                postings.append(posting)
            }
            let size = postings.reduce(0) { $0 + $1.count }
            if size == 0 { return [] }
            lists.append((postings, size))
        }
        lists.sort { $0.size < $1.size }
        var result = Self.union(lists[0].postings)
        for list in lists.dropFirst() where !result.isEmpty {
            if list.postings.count == 1 {
                result = Self.intersect(result, list.postings[0])
            } else if result.count * list.postings.count * 8 < list.size {
                // Few candidates against many tokens: look each candidate up rather than merge.
                result = result.filter { slot in list.postings.contains { Self.contains(slot, $0) } }
            } else {
                result = Self.intersect(result, Self.union(list.postings))
            }
        }
        return result.map(Int.init)
    }

    /// The positions in `sorted` of the tokens whose Unicode scalars (in the normalized form
    /// `String` compares) begin with `prefix`'s. That includes every token that `hasPrefix` it —
    /// a prefix by characters is one by scalars — and the caller filters out the rare token that is
    /// one by scalars only (a Hangul jamo that joins the next into one character). U+10FFFF is a
    /// noncharacter, never in a token, so every such token sorts below `prefix` followed by it.
    private static func prefixRange(_ prefix: String, in sorted: [String]) -> Range<Int> {
        let lower = lowerBound(prefix, in: sorted, from: 0)
        return lower..<lowerBound(prefix + "\u{10FFFF}", in: sorted, from: lower)
    }

    // MARK: The sorted token list

    /// The distinct tokens held, ascending: merged from the notes, or built from the keys, on the
    /// first call after they changed; then the same list until the next write that changes them.
    private func sortedTokens() -> [String] {
        order.withLock { cached in
            if let cached { return cached }
            let sorted = sortedBase.map(merged) ?? shards.flatMap(\.keys).sorted()
            cached = sorted
            return sorted
        }
    }

    /// `base` without ``removed`` (a subset of it) and with ``added`` (disjoint from it), ascending.
    private func merged(_ base: [String]) -> [String] {
        let gone = removed.sorted()
        let new = added.sorted()
        var result: [String] = []
        result.reserveCapacity(base.count - gone.count + new.count)
        var (next, skip) = (0, 0)
        for token in base {
            if skip < gone.count, gone[skip] == token {
                skip += 1
                continue
            }
            while next < new.count, new[next] < token {
                result.append(new[next])
                next += 1
            }
            result.append(token)
        }
        result.append(contentsOf: new[next...])
        return result
    }

    private mutating func noteAppeared(_ token: String) {
        willChangeTokens()
        guard sortedBase != nil else { return }
        if removed.remove(token) == nil { added.insert(token) }
        trimNotes()
    }

    private mutating func noteVanished(_ token: String) {
        willChangeTokens()
        guard sortedBase != nil else { return }
        if added.remove(token) == nil { removed.insert(token) }
        trimNotes()
    }

    /// Before the distinct tokens change: adopts a list a prefix query merged as the new base, and
    /// makes sure the cached list is this value's own and empty — a copy may share the old one.
    private mutating func willChangeTokens() {
        let merged = order.withLock { $0 }
        if let merged {
            sortedBase = merged
            added = []
            removed = []
        }
        if !isKnownUniquelyReferenced(&order) {
            order = Locked(nil)
        } else if merged != nil {
            order.withLock { $0 = nil }
        }
    }

    /// Drops the base once the notes outgrow a quarter of it: sorting the keys afresh then costs
    /// about what merging would, and the notes stop growing.
    private mutating func trimNotes() {
        guard let base = sortedBase, added.count + removed.count > max(64, base.count / 4) else { return }
        sortedBase = nil
        added = []
        removed = []
    }

    // MARK: Memory

    /// An estimate of the heap bytes this value holds, storage shared with copies included: the
    /// shards' hash tables, the tokens longer than a small string, the posting lists' capacity,
    /// the sorted list and the notes, each allocation rounded to 16 bytes. It walks every token.
    var memoryBytes: Int {
        let entry = MemoryLayout<String>.stride + MemoryLayout<[UInt32]>.stride
        var bytes = Self.heapBytes(32 + shards.capacity * MemoryLayout<Postings>.stride)
        for shard in shards {
            bytes += Self.tableBytes(capacity: shard.capacity, entry: entry)
            for (token, posting) in shard {
                bytes += Self.stringBytes(token) + (posting.capacity == 0 ? 0 : Self.heapBytes(32 + 4 * posting.capacity))
            }
        }
        // The lists share their strings' storage with the keys: only the array is counted.
        let lists = [sortedBase, order.withLock { $0 }].compactMap { $0 }
        bytes += lists.reduce(0) { $0 + ($1.capacity == 0 ? 0 : Self.heapBytes(32 + $1.capacity * MemoryLayout<String>.stride)) }
        for notes in [added, removed] {
            bytes += Self.tableBytes(capacity: notes.capacity, entry: MemoryLayout<String>.stride)
        }
        return bytes
    }

    /// A native hash table's allocation: a power-of-two number of buckets filled at most to 3/4,
    /// a bit per bucket, an entry per bucket, and a header.
    private static func tableBytes(capacity: Int, entry: Int) -> Int {
        guard capacity > 0 else { return 0 }
        var buckets = 1
        while buckets * 3 < capacity * 4 { buckets *= 2 }
        return heapBytes(64 + buckets / 8 + buckets * entry)
    }

    /// The heap a string holds beyond its 16 inline bytes: none up to 15 UTF-8 bytes.
    private static func stringBytes(_ string: String) -> Int {
        let count = string.utf8.count
        return count <= 15 ? 0 : heapBytes(32 + count + 1)
    }

    private static func heapBytes(_ bytes: Int) -> Int { (bytes + 15) & ~15 }

    // MARK: Posting lists and shards

    /// The shard of `token`: by `hashValue`, which (as `==`) treats canonically equivalent
    /// strings alike, so such strings meet in one shard as they do in one `Set`.
    private static func shard(of token: String) -> Int { token.hashValue & (shardCount - 1) }

    /// Adds `slot` to an ascending list unless it is there; whether the list was empty before.
    private static func insert(_ slot: UInt32, into posting: inout [UInt32]) -> Bool {
        guard let last = posting.last else {
            posting.append(slot)
            return true
        }
        if last < slot {
            posting.append(slot)
        } else {
            let place = lowerBound(slot, in: posting, from: 0)
            if posting[place] != slot { posting.insert(slot, at: place) }
        }
        return false
    }

    /// Takes `slot` out of a list, and the list out of its table when it empties; whether it did.
    private static func erase(_ slot: UInt32, from posting: inout [UInt32]?) -> Bool {
        // No local copy of the list: it would make the removal below copy the whole list.
        guard let count = posting?.count, let place = posting.map({ lowerBound(slot, in: $0, from: 0) }),
              place < count, posting?[place] == slot else { return false }
        if count == 1 {
            posting = nil
            return true
        }
        posting?.remove(at: place)
        return false
    }

    private static func contains(_ slot: UInt32, _ posting: [UInt32]) -> Bool {
        let place = lowerBound(slot, in: posting, from: 0)
        return place < posting.count && posting[place] == slot
    }

    /// The first place at or after `from` whose element is not below `value`, by binary search.
    private static func lowerBound<Element: Comparable>(_ value: Element, in sorted: [Element], from: Int) -> Int {
        var (low, high) = (from, sorted.count)
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The slots of two ascending lists held by both: a walk through both, or a binary search of
    /// the longer for each slot of a much shorter one.
    private static func intersect(_ first: [UInt32], _ second: [UInt32]) -> [UInt32] {
        let (short, long) = first.count <= second.count ? (first, second) : (second, first)
        var result: [UInt32] = []
        result.reserveCapacity(short.count)
        if short.count * 16 < long.count {
            var from = 0
            for slot in short {
                from = lowerBound(slot, in: long, from: from)
                if from == long.count { break }
                if long[from] == slot { result.append(slot) }
            }
            return result
        }
        var (i, j) = (0, 0)
        while i < short.count, j < long.count {
            if short[i] < long[j] {
                i += 1
            } else if long[j] < short[i] {
                j += 1
            } else {
                result.append(short[i])
                i += 1
                j += 1
            }
        }
        return result
    }

    /// The slots of any of the ascending lists, ascending and each once: through a bitmap of the
    /// slots, or by sorting when the slots are too sparse for one.
    private static func union(_ postings: [[UInt32]]) -> [UInt32] {
        if postings.count == 1 { return postings[0] }
        let total = postings.reduce(0) { $0 + $1.count }
        let largest = Int(postings.compactMap(\.last).max() ?? 0)
        var result: [UInt32] = []
        result.reserveCapacity(total)
        if largest / 64 > total * 4 {
            for posting in postings { result.append(contentsOf: posting) }
            result.sort()
            var kept = 0
            for index in result.indices where kept == 0 || result[kept - 1] != result[index] {
                result[kept] = result[index]
                kept += 1
            }
            result.removeLast(result.count - kept)
            return result
        }
        var words = [UInt64](repeating: 0, count: largest / 64 + 1)
        for posting in postings {
            for slot in posting { words[Int(slot >> 6)] |= 1 << UInt64(slot & 63) }
        }
        for (index, word) in words.enumerated() {
            var bits = word
            while bits != 0 {
                result.append(UInt32(index << 6 | bits.trailingZeroBitCount))
                bits &= bits - 1
            }
        }
        return result
    }
}
