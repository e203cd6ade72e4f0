/// SplitMix64: a small deterministic generator, the same on every platform,
/// so a fuzz run with a given seed can be repeated exactly.
public struct SplitMix64 {
    public var state: UInt64
    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// 0 ..< n (n > 0); always draws.
    public mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    /// 0 ..< n; 0 without drawing when n is 0 or 1.
    public mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }
    public mutating func pick<T>(_ a: [T]) -> T { a[int(a.count)] }
    /// True with probability `p` (0...1).
    public mutating func chance(probability p: Double) -> Bool { Double(next() % 1_000_000) / 1_000_000 < p }
    /// True `percent` times in a hundred.
    public mutating func chance(percent: Int) -> Bool { below(100) < percent }
    public mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
}
