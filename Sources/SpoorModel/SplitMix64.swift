/// SplitMix64: a small, fast generator with a 64-bit state.
///
/// Spoor uses it wherever a run must replay exactly from a seed (tests, simulations, benchmark data), and its
/// finaliser ``mix(_:)`` wherever a value must be derived from others (track ids, the ids of split batches). It
/// is not cryptographic.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator; the same seed gives the same sequence.
    public init(seed: UInt64) {
        state = seed
    }

    /// The step between states: 2^64 divided by the golden ratio, odd.
    public static let increment: UInt64 = 0x9E37_79B9_7F4A_7C15

    /// The next value.
    public mutating func next() -> UInt64 {
        state &+= Self.increment
        return Self.mix(state)
    }

    /// SplitMix64's finaliser: scrambles `value` so that every input bit affects every output bit.
    @inlinable
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
