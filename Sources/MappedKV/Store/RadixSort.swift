// Sorting 64-bit words by a range of their bits in linear time, for the index: its records in
// file order (a walk that reads the mirror forwards) and a load's records in hash order (a table
// filled front to back).
//
// Invariant: the sort is stable. Words whose sorting bits are equal keep the order they came in,
// which is what lets a load keep the last of a key's records.

/// A least-significant-digit radix sort of `UInt64` words.
enum RadixSort {
    /// The most bits a pass sorts by: 4,096 counters, which stay in the first-level cache.
    private static let maximumDigitBits = 12
    /// Below this many words a comparison sort is faster than the passes.
    private static let minimumCount = 256

    /// Sorts `words` by the unsigned number in bits `bits` of each (bit 0 the least significant),
    /// stably: in as few passes of at most 12 bits as cover the range.
    static func sort(_ words: inout [UInt64], byBits bits: Range<Int>) {
        precondition(bits.lowerBound >= 0 && bits.upperBound <= 64, "RadixSort: bits outside a UInt64")
        guard words.count > 1, !bits.isEmpty else { return }
        let width = bits.count
        let low = UInt64(bits.lowerBound)
        let keyMask: UInt64 = width == 64 ? .max : (1 << UInt64(width)) - 1
        guard words.count > minimumCount else {
            // Stable by hand: equal keys are ordered by where they came from.
            let sorted = words.enumerated().sorted { a, b in
                let keyA = (a.element &>> low) & keyMask
                let keyB = (b.element &>> low) & keyMask
                return keyA != keyB ? keyA < keyB : a.offset < b.offset
            }
            words = sorted.map(\.element)
            return
        }
        let passes = (width + maximumDigitBits - 1) / maximumDigitBits
        let digitBits = (width + passes - 1) / passes
        var scratch = [UInt64](unsafeUninitializedCapacity: words.count) { _, initialized in initialized = words.count }
        var counts = [Int](repeating: 0, count: 1 << digitBits)
        for pass in 0..<passes {
            let shift = low + UInt64(pass * digitBits)
            let bitsThisPass = min(digitBits, width - pass * digitBits)
            let mask: UInt64 = (1 << UInt64(bitsThisPass)) - 1
            words.withUnsafeBufferPointer { source in
                scratch.withUnsafeMutableBufferPointer { target in
                    counts.withUnsafeMutableBufferPointer { counts in
                        for digit in counts.indices { counts[digit] = 0 }
                        for word in source { counts[Int(truncatingIfNeeded: (word &>> shift) & mask)] &+= 1 }
                        var total = 0
                        for digit in 0..<(1 << bitsThisPass) {
                            let count = counts[digit]
                            counts[digit] = total
                            total &+= count
                        }
                        for word in source {
                            let digit = Int(truncatingIfNeeded: (word &>> shift) & mask)
                            target[counts[digit]] = word
                            counts[digit] &+= 1
                        }
                    }
                }
            }
            swap(&words, &scratch)
        }
    }
}
