// A walk over the keys whose hashes fall in a range, for work done in bounded steps (a sweep).
//
// The invariant it relies on: a key's home bucket is the top bits of its hash, linear probing puts
// it at or after its home, and removal shifts entries back rather than leaving tombstones, so no
// empty bucket ever lies between a key's home and its bucket. The keys of hashes `lo..<hi` are
// therefore all in the run that starts at `home(lo)`, passes `home(hi - 1)` and ends at the next
// empty bucket (wrapping past the end of the table). Ranges that tile the hash space visit every
// key exactly once however the table grows or shrinks between them, since a range names hashes,
// not buckets.
extension KeyIndex {
    /// The number of distinct 31-bit hashes: the end of the last range.
    static let hashSpace: UInt64 = 1 << 31

    /// Calls `body` with the slot of every key whose hash is in `lo..<hi` (`hi` at most
    /// ``hashSpace``), in no particular order; keys that are not UTF-8 come with `repaired` true.
    func forEachSlot(
        hashesFrom lo: UInt64, below hi: UInt64, in mirror: UnsafeRawBufferPointer,
        _ body: (_ slot: ValueSlot, _ repaired: Bool) throws -> Void
    ) rethrows {
        guard !entries.isEmpty, lo < hi else { return }
        let bucketCount = entries.count
        let first = home(UInt32(truncatingIfNeeded: lo))
        let last = home(UInt32(truncatingIfNeeded: hi - 1))
        // Buckets past `last` are read until the run ends; the table is never full, so it does,
        // but the walk never goes round more than once.
        var offset = 0
        while offset < bucketCount {
            let position = (first + offset) & (bucketCount - 1)
            let entry = entries[position]
            if entry.isEmpty {
                if first + offset >= last { return }
            } else {
                let hash = UInt64(entry.hash)
                if hash >= lo && hash < hi, let slot = Self.slot(of: entry, in: mirror) {
                    try body(slot, entry.isRepaired)
                }
            }
            offset += 1
        }
    }

    /// The end of the hash range that starts at `lo` and holds about `keys` keys, if hashes are
    /// spread evenly (they are: the hash is seeded and mixes every key byte).
    func hashRangeEnd(from lo: UInt64, holdingAbout keys: Int) -> UInt64 {
        // Checked before the product, which would overflow for a limit near `Int.max`.
        guard keys < count else { return Self.hashSpace }
        let width = max(1, Self.hashSpace * UInt64(max(keys, 1)) / UInt64(count))
        return min(Self.hashSpace, lo + width)
    }
}
