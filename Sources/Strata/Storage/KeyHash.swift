/// Primary key → slot for a ``ColumnTable`` or a ``ColumnBlock``: an open-addressing hash table
/// (linear probing, backward-shift deletion) that holds no key of its own.
///
/// A bucket is one `UInt64`: the key's 32-bit hash in the high half, its slot + 1 in the low
/// half (0: empty). The keys stay in their column; a lookup is given the hash and a closure that
/// says whether a slot's key cell is the one sought, so the table is not generic and stores no
/// `String` per key: what a table held before was a `[DatabaseValue: Int]` whose text keys each
/// cost a heap allocation and a SipHash of a `String`. The hash is computed over the key
/// cell's bytes (``KeyProbe``), so it equates exactly what ``DatabaseValue``'s `==` equates.
///
/// At most half the buckets are used, so probes stay short; growing rehashes from the stored
/// hashes alone (no key is read).
struct KeyHash: Sendable {
    private var buckets: [UInt64] = []
    /// The number of keys held.
    private(set) var count = 0

    /// An empty table with room for `keys` keys.
    init(capacity keys: Int = 0) {
        if keys > 0 { reserveCapacity(keys) }
    }

    /// The slot stored under `hash` whose key `isKey` accepts, or nil.
    func find(_ hash: UInt32, where isKey: (Int) -> Bool) -> Int? {
        count > 0 ? locate(hash, where: isKey).slot : nil
    }

    /// Where a key is or would go: the slot stored under `hash` whose key `isKey` accepts, or
    /// else the empty bucket the probe ended at (-1 when there are no buckets yet), which
    /// ``insert(_:slot:at:)`` fills without probing again: finding a key and then inserting it
    /// would walk its run of buckets twice, a cache miss more for every key a load indexes.
    func locate(_ hash: UInt32, where isKey: (Int) -> Bool) -> (slot: Int?, bucket: Int) {
        guard !buckets.isEmpty else { return (nil, -1) }
        return buckets.withUnsafeBufferPointer { Self.probe($0, for: hash, where: isKey) }
    }

    /// The one probe of the table: from `hash`'s home bucket, the slot stored under `hash` whose
    /// key `isKey` accepts, or else the empty bucket the run ends at. `buckets` is not empty.
    @inline(__always)
    private static func probe(_ buckets: UnsafeBufferPointer<UInt64>, for hash: UInt32,
                              where isKey: (Int) -> Bool) -> (slot: Int?, bucket: Int) {
        let mask = buckets.count - 1
        var index = Int(hash) & mask
        while true {
            let bucket = buckets[index]
            if bucket == 0 { return (nil, index) }
            if hashOf(bucket) == hash {
                let slot = Int(truncatingIfNeeded: bucket & 0xFFFF_FFFF) - 1
                if isKey(slot) { return (slot, index) }
            }
            index = (index + 1) & mask
        }
    }

    /// Stores `slot` under `hash` in `bucket`, where ``locate(_:where:)`` found its key absent;
    /// nothing was inserted or removed since. Probes afresh when the table grows first.
    mutating func insert(_ hash: UInt32, slot: Int, at bucket: Int) {
        guard bucket >= 0, (count + 1) * 2 <= buckets.count else { return insert(hash, slot: slot) }
        precondition(slot >= 0 && slot < Int(UInt32.max), "slot \(slot) is beyond what a key hash holds")
        precondition(buckets[bucket] == 0, "a key hash's bucket was taken between locating and inserting")
        buckets[bucket] = Self.bucket(hash, slot: slot)
        count += 1
    }

    /// Stores `slot` under `hash`. The caller has checked (``find(_:where:)``) that its key is
    /// not held.
    mutating func insert(_ hash: UInt32, slot: Int) {
        precondition(slot >= 0 && slot < Int(UInt32.max), "slot \(slot) is beyond what a key hash holds")
        if (count + 1) * 2 > buckets.count { grow(toHold: count + 1) }
        Self.place(Self.bucket(hash, slot: slot), in: &buckets)
        count += 1
    }

    /// Adds up to `keys` keys in one pass (a block's every row at a warm start): `body` is given a
    /// ``Filler`` that stores each key's slot in place, with one check of the table's room for
    /// them all instead of one per key.
    mutating func fill<R>(adding keys: Int, _ body: (inout Filler) throws -> R) rethrows -> R {
        reserveCapacity(count + keys)
        var table = buckets
        buckets = []   // so that `table` is the buckets' only owner, and is written in place
        defer { buckets = table }
        return try table.withUnsafeMutableBufferPointer { table in
            var filler = Filler(buckets: table, room: keys)
            defer { count += filler.added }
            return try body(&filler)
        }
    }

    /// Stores slots in a ``KeyHash``'s buckets during ``fill(adding:_:)``, at most as many as the
    /// table made room for.
    struct Filler: ~Copyable {
        fileprivate let buckets: UnsafeMutableBufferPointer<UInt64>
        fileprivate let room: Int
        fileprivate(set) var added = 0

        /// Stores `slot` under `hash`, unless a slot stored under `hash` holds the same key
        /// (`isKey` accepts it): then nothing is stored and that slot is returned.
        mutating func insert(_ hash: UInt32, slot: Int, unlessHeld isKey: (Int) -> Bool) -> Int? {
            precondition(added < room, "a key hash filled with more keys than it made room for")
            precondition(slot >= 0 && slot < Int(UInt32.max), "slot \(slot) is beyond what a key hash holds")
            let (held, bucket) = KeyHash.probe(UnsafeBufferPointer(buckets), for: hash, where: isKey)
            if let held { return held }
            buckets[bucket] = KeyHash.bucket(hash, slot: slot)
            added += 1
            return nil
        }
    }

    /// Removes `slot`, stored under `hash`. Later buckets of its run move back so that no probe
    /// meets a hole before the bucket it is after.
    mutating func remove(_ hash: UInt32, slot: Int) {
        let entry = Self.bucket(hash, slot: slot)
        buckets.withUnsafeMutableBufferPointer { buckets in
            let mask = buckets.count - 1
            var hole = Int(hash) & mask
            while buckets[hole] != entry {
                precondition(buckets[hole] != 0, "slot \(slot) is not in the key hash")
                hole = (hole + 1) & mask
            }
            var next = hole
            while true {
                next = (next + 1) & mask
                let bucket = buckets[next]
                if bucket == 0 { break }
                // The bucket may move into the hole only if its home is not after the hole
                // (cyclically, between the hole and the bucket).
                let home = Int(Self.hashOf(bucket)) & mask
                let homeInRun = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next)
                if !homeInRun {
                    buckets[hole] = bucket
                    hole = next
                }
            }
            buckets[hole] = 0
        }
        count -= 1
    }

    /// Makes room for `keys` keys in all, so that reaching them rehashes at most once.
    mutating func reserveCapacity(_ keys: Int) {
        if keys * 2 > buckets.count { grow(toHold: keys) }
    }

    /// Removes every key and releases the buckets.
    mutating func removeAll() {
        buckets = []
        count = 0
    }

    private mutating func grow(toHold keys: Int) {
        var size = max(16, buckets.count)
        while size < keys * 2 { size *= 2 }
        precondition(size <= 1 << 32, "a key hash holds at most 2^31 keys")
        var grown = FreshMemory.array(repeating: UInt64(0), count: size)
        for bucket in buckets where bucket != 0 { Self.place(bucket, in: &grown) }
        buckets = grown
    }

    /// The bucket holding `slot` under `hash`.
    @inline(__always)
    fileprivate static func bucket(_ hash: UInt32, slot: Int) -> UInt64 { UInt64(hash) << 32 | UInt64(slot + 1) }

    /// The hash a bucket holds its slot under.
    @inline(__always)
    private static func hashOf(_ bucket: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: bucket >> 32) }

    /// Puts `bucket` in the first empty bucket from its home.
    private static func place(_ bucket: UInt64, in buckets: inout [UInt64]) {
        buckets.withUnsafeMutableBufferPointer { buckets in
            let mask = buckets.count - 1
            var index = Int(hashOf(bucket)) & mask
            while buckets[index] != 0 { index = (index + 1) & mask }
            buckets[index] = bucket
        }
    }
}
