/// A seeded 64-bit hash of a key's bytes, for ``KeyIndex``.
///
/// Keys are short (most under 32 bytes), so the hash reads them as 8-byte words and folds each
/// into the state with one 64×64→128-bit multiply, xoring the product's halves. Inputs under
/// 8 bytes are read with overlapping 4-byte or single-byte loads, so no byte loop runs.
///
/// The seed is random per index, so hash values differ between processes and between runs. It is
/// not a cryptographic MAC: an attacker who can choose keys and time operations could still try
/// to provoke collisions; each collision costs one extra probe, never correctness.
///
/// Package-visible: a layer that keeps tables of the store's keys hashes them with it, by their
/// bytes as the store does (Swift's `String` hashing follows canonical equivalence, which the store does not).
package struct KeyHasher: Sendable {
    /// The starting state, from the seed.
    private let seed: UInt64
    /// A second secret, xored into every word before it is multiplied, so no key the caller can
    /// choose without knowing the seed zeroes a product.
    private let wordKey: UInt64

    /// A hasher with a fresh random seed.
    package init() {
        var generator = SystemRandomNumberGenerator()
        self.init(seed: generator.next())
    }

    /// A hasher with a fixed seed (for tests).
    package init(seed: UInt64) {
        self.seed = seed
        self.wordKey = Self.fold(seed ^ Self.k2, Self.k3) | 1
    }

    /// The seed, for a table that is stored and later hashed into again (docs/FORMAT.md 12).
    package var storedSeed: UInt64 { seed }

    // Odd 64-bit constants with well-mixed bits (digits of pi and e, forced odd).
    private static let k0: UInt64 = 0x243F_6A88_85A3_08D3
    private static let k1: UInt64 = 0x1319_8A2E_0370_7345 | 1
    private static let k2: UInt64 = 0xB7E1_5162_8AED_2A6B
    private static let k3: UInt64 = 0xA409_3822_299F_31D1

    /// The high and low halves of `a * b` xored: the fold that mixes every input bit into the output.
    @inline(__always)
    private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    /// The hash of `bytes`.
    @inline(__always)
    package func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var state = seed ^ Self.fold(UInt64(truncatingIfNeeded: count) ^ Self.k0, Self.k1)
        guard let base = bytes.baseAddress else { return Self.fold(state, Self.k2) }
        let a: UInt64
        let b: UInt64
        if count <= 16 {
            if count >= 8 {
                a = base.loadUnaligned(as: UInt64.self)
                b = base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            } else if count >= 4 {
                a = UInt64(base.loadUnaligned(as: UInt32.self))
                b = UInt64(base.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            } else {
                // 1 to 3 bytes: the first, middle and last (which may coincide).
                let first = UInt64(base.load(fromByteOffset: 0, as: UInt8.self))
                let middle = UInt64(base.load(fromByteOffset: count / 2, as: UInt8.self))
                let last = UInt64(base.load(fromByteOffset: count - 1, as: UInt8.self))
                a = first | middle << 8 | last << 16
                b = 0
            }
        } else {
            var offset = 0
            while count - offset > 16 {
                let word0 = base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                let word1 = base.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
                state = Self.fold(word0 ^ wordKey, word1 ^ state)
                offset += 16
            }
            // The last 16 bytes, overlapping the words already read when the count is not a multiple of 16.
            a = base.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self)
            b = base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
        }
        state = Self.fold(a ^ wordKey, b ^ state)
        return Self.fold(state ^ Self.k3, Self.k1)
    }
}
