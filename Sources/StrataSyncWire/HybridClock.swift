/// A device's hybrid logical clock, in milliseconds: never behind the wall clock, always past
/// every time it produced or saw, so an edit made after seeing a change is ordered after it
/// whatever the devices' clocks say.
public struct HybridClock: Sendable, Hashable, Codable {
    /// The greatest time produced or seen.
    public private(set) var last: Int64

    /// A clock that has seen nothing past `last`.
    public init(last: Int64 = 0) { self.last = last }

    /// The time of a write made at `wallMilliseconds`: the greater of it and one past ``last``.
    public mutating func stamp(wallMilliseconds: Int64) -> Int64 {
        last = max(wallMilliseconds, last &+ 1)
        return last
    }

    /// Takes in a time seen in a pull, so later writes are ordered after it.
    public mutating func observe(_ time: Int64) { last = max(last, time) }
}
