/// A small seedable random number generator (SplitMix64), so that a stress run is reproducible
/// from its seed: the parent's kill schedule and every child's choice of operations.
struct StressRandom: RandomNumberGenerator {
    private var state: UInt64

    /// A generator seeded with `seed`.
    init(seed: UInt64) { state = seed }

    /// A generator for one incarnation of one child: seeded by the run's seed, the child's index
    /// and its incarnation, so a restarted child does not replay the choices of the one it replaces.
    init(seed: UInt64, child: Int, incarnation: Int) {
        var mixer = StressRandom(seed: seed)
        var combined = mixer.next()
        mixer = StressRandom(seed: combined &+ UInt64(truncatingIfNeeded: child))
        combined ^= mixer.next()
        mixer = StressRandom(seed: combined &+ (UInt64(truncatingIfNeeded: incarnation) << 32))
        combined ^= mixer.next()
        state = combined
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
