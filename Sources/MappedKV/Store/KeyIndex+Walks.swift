// Walks over the index: every slot (in hash order, or in the order of the records in the file),
// every record start, and the longest probe run. They only read the buckets; each slot is decoded
// from its record's header in the mirror the caller passes.
extension KeyIndex {
    /// Calls `body` with every slot of `mirror`, in no particular order.
    func forEachSlot(in mirror: UnsafeRawBufferPointer, _ body: (ValueSlot) throws -> Void) rethrows {
        for entry in entries where !entry.isEmpty {
            if let slot = Self.slot(of: entry, in: mirror) { try body(slot) }
        }
    }

    /// Calls `body` with where each key's record starts, in no particular order.
    func forEachRecordStart(_ body: (Int) -> Void) {
        for entry in entries where !entry.isEmpty { body(entry.recordStart) }
    }

    /// Calls `body` with every slot of `mirror` in the order of the records in the file, so that
    /// a walk reads the mirror forwards (which the processor prefetches) instead of jumping to a
    /// random record each time: the record starts are sorted first, four to eight bytes each.
    func forEachSlotInFileOrder(in mirror: UnsafeRawBufferPointer, _ body: (ValueSlot) throws -> Void) rethrows {
        var words: [UInt64] = []
        words.reserveCapacity(count)
        var largest: UInt64 = 0
        for entry in entries where !entry.isEmpty {
            let word = UInt64(entry.recordStart) << 1 | (entry.isRepaired ? 1 : 0)
            words.append(word)
            largest = Swift.max(largest, word)
        }
        // By the record start alone: starts are distinct, so the flag bit below them never decides
        // the order, and leaving it out saves a pass whenever it would tip the width past a pass.
        RadixSort.sort(&words, byBits: 1..<max(1, 64 - largest.leadingZeroBitCount))
        for word in words {
            if let slot = Self.slot(ofRecordAt: Int(word >> 1), repaired: word & 1 != 0, in: mirror) { try body(slot) }
        }
    }

    /// Every slot of `mirror`, in no particular order.
    func slots(in mirror: UnsafeRawBufferPointer) -> [ValueSlot] {
        var result: [ValueSlot] = []
        result.reserveCapacity(count)
        forEachSlot(in: mirror) { result.append($0) }
        return result
    }

    /// The longest run of occupied buckets (a probe never visits more); for tests.
    var longestRun: Int {
        var longest = 0
        var current = 0
        for entry in entries + entries {  // twice round, for a run that wraps
            if entry.isEmpty {
                current = 0
            } else {
                current += 1
                longest = max(longest, current)
            }
        }
        return min(longest, entries.count)
    }
}
