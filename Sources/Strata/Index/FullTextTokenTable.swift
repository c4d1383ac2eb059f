/// The distinct tokens of a bulk build of a ``FullTextIndex``, keyed by their UTF-8 bytes, and
/// each one's posting list: a token occurrence costs a hash of its bytes and a probe, and a
/// `String` is made once per distinct token, when the build hands the lists to the index.
///
/// Tokens are told apart by their bytes, so two canonically equivalent spellings of one token
/// (rare: only non-ASCII text can hold them) get two lists; ``FullTextIndex/built(positions:slots:row:)``
/// merges them, as `String`'s `==` would have.
struct FullTextTokenTable {
    /// The tokens' bytes, one after the other; token `id` spans `starts[id]..<starts[id + 1]`.
    private var bytes: [UInt8] = []
    private var starts: [Int] = [0]
    private var hashes: [UInt64] = []
    /// Each token's slots, ascending and each once, in the order the tokens first appeared.
    private(set) var postings: [[UInt32]] = []
    /// Open addressing with linear probing: a token's id, or -1; a power of two long, at most 3/4 full.
    private var buckets = [Int32](repeating: -1, count: 1024)

    /// How many distinct tokens it holds.
    var count: Int { postings.count }

    /// Adds `slot` to the list of the token spelled by `token`, unless it is the list's last slot
    /// already: slots must be given in ascending order.
    mutating func append(_ slot: UInt32, to token: UnsafeBufferPointer<UInt8>) {
        let hash = Self.hash(token)
        let mask = buckets.count - 1
        var bucket = Int(truncatingIfNeeded: hash) & mask
        while case let id = Int(buckets[bucket]), id >= 0 {
            if hashes[id] == hash && spells(id, token) {
                if postings[id].last != slot { postings[id].append(slot) }
                return
            }
            bucket = (bucket + 1) & mask
        }
        buckets[bucket] = Int32(postings.count)
        bytes.append(contentsOf: token)
        starts.append(bytes.count)
        hashes.append(hash)
        postings.append([slot])
        if postings.count * 4 > buckets.count * 3 { grow() }
    }

    /// The token `id` as a string.
    func token(_ id: Int) -> String {
        String(decoding: bytes[starts[id]..<starts[id + 1]], as: UTF8.self)
    }

    /// Whether token `id`'s bytes are `token`'s.
    private func spells(_ id: Int, _ token: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = starts[id]
        guard starts[id + 1] - start == token.count else { return false }
        return bytes.withUnsafeBufferPointer { held in
            for offset in 0..<token.count where held[start + offset] != token[offset] { return false }
            return true
        }
    }

    /// Doubles the buckets and places every token again by its kept hash.
    private mutating func grow() {
        buckets = [Int32](repeating: -1, count: buckets.count * 2)
        let mask = buckets.count - 1
        for (id, hash) in hashes.enumerated() {
            var bucket = Int(truncatingIfNeeded: hash) & mask
            while buckets[bucket] >= 0 { bucket = (bucket + 1) & mask }
            buckets[bucket] = Int32(id)
        }
    }

    /// FNV-1a over the bytes, then a finalizer that spreads every bit into the low ones the
    /// buckets are chosen by. Not seeded: the table lives only during one build, on its own input.
    private static func hash(_ token: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in token { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        hash ^= hash >> 33
        hash &*= 0xFF51_AFD7_ED55_8CCD
        return hash ^ hash >> 33
    }
}
