import Foundation

/// SplitMix64: small, fast and reproducible from its seed, so a failing seed can be replayed.
public struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound`.
    public mutating func next(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

extension SeededRandom {
    /// The seed of a randomized test: `STRATA_SEED` when set (to replay a failure), a fresh one
    /// otherwise. It is printed, so that any run — a failing one above all — can be replayed with
    /// `STRATA_SEED=<seed> swift test --filter <test>`. The one place tests get their randomness.
    public static func seed(for test: String) -> UInt64 {
        let seed = ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        print("\(test): seed \(seed) (replay with STRATA_SEED=\(seed))")
        return seed
    }

    /// A generator for `test`, seeded by ``seed(for:)``; the seed too, for failure messages.
    public static func forTest(_ test: String) -> (generator: SeededRandom, seed: UInt64) {
        let seed = seed(for: test)
        return (SeededRandom(seed: seed), seed)
    }
}
