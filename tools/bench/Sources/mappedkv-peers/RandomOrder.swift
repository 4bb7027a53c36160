/// The orders of the `*_random` workloads: permutations drawn from fixed seeds, so every design,
/// round and run visits the same keys in the same order, and a figure moves only with the design.
///
/// The generator is SplitMix64 and the shuffle Fisher–Yates, both written out here so that the
/// orders do not depend on the standard library's shuffle.
enum RandomOrder {
    /// The order of the random sets.
    static let setSeed: UInt64 = 0x5EED_0000_0000_0001
    /// The order of the random gets.
    static let getSeed: UInt64 = 0x5EED_0000_0000_0002

    /// A permutation of 0..<count.
    static func permutation(_ count: Int, seed: UInt64) -> [Int] {
        var order = Array(0..<count)
        var generator = SplitMix64(seed: seed)
        var index = count - 1
        while index > 0 {
            // Multiply-high maps the 64 random bits onto 0...index without a division.
            let pick = Int(generator.next().multipliedFullWidth(by: UInt64(index + 1)).high)
            order.swapAt(index, pick)
            index -= 1
        }
        return order
    }

    /// `items` in the order of `permutation(items.count, seed:)`.
    static func shuffled<T>(_ items: [T], seed: UInt64) -> [T] {
        permutation(items.count, seed: seed).map { items[$0] }
    }
}

/// Sebastiano Vigna's SplitMix64: a 64-bit state advanced by a constant and mixed.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
