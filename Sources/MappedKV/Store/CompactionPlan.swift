import MappedKVFormat

/// Where each live record of a region goes when a full write-back compacts it, keeping the
/// records in the order they were written.
///
/// Built in linear time without sorting: one pass over the index marks each live record's start
/// in a bit set; one framing pass over the region collects the marked records in file order and
/// gives each its new offset. A record's rank among the live ones (a count of set bits, from
/// per-word prefix counts) then finds its new offset in constant time, so the index can be
/// relocated in place instead of rebuilt.
struct CompactionPlan {
    /// Maximal runs of adjacent live records, as `(start, length)` in the old region: what to copy.
    private(set) var runs: [(start: Int, length: Int)] = []
    /// The bytes of all live records.
    private(set) var liveLength = 0
    /// Bit `s` is set when a live record starts at offset `s`.
    private var isLive: [UInt64]
    /// The number of set bits in the words before each word of ``isLive``.
    private var ranks: [UInt32]
    /// The new offset of each live record, counted from the end of the holder, in file order.
    private var newStarts: [UInt32] = []

    /// Plans the compaction of `region` (which starts with the item-size holder) keeping the
    /// records of `slots`; nil if some slot is not a record the framing pass finds.
    init?(region: UnsafeRawBufferPointer, slots: KeyIndex) {
        let words = region.count / 64 + 1
        var isLive = [UInt64](repeating: 0, count: words)
        slots.forEachRecordStart { start in isLive[start >> 6] |= 1 << UInt64(start & 63) }
        var runs: [(start: Int, length: Int)] = []
        var newStarts: [UInt32] = []
        newStarts.reserveCapacity(slots.count)
        var written = 0
        _ = RecordDecoder.decode(region, from: 0, skipsHolder: true) { record in
            guard isLive[record.start >> 6] & (1 << UInt64(record.start & 63)) != 0 else { return }
            let length = record.end - record.start
            if let last = runs.last, last.start + last.length == record.start {
                runs[runs.count - 1].length += length
            } else {
                runs.append((record.start, length))
            }
            newStarts.append(UInt32(truncatingIfNeeded: written))
            written += length
        }
        guard newStarts.count == slots.count else { return nil }
        var ranks = [UInt32](repeating: 0, count: words)
        var total: UInt32 = 0
        for word in 0..<words {
            ranks[word] = total
            total &+= UInt32(isLive[word].nonzeroBitCount)
        }
        self.isLive = isLive
        self.ranks = ranks
        self.runs = runs
        self.newStarts = newStarts
        self.liveLength = written
    }

    /// The offset, counted from the end of the holder, where the live record now at `start` goes.
    func newStart(ofRecordAt start: Int) -> Int {
        let word = start >> 6
        let below = isLive[word] & ((1 << UInt64(start & 63)) &- 1)
        return Int(newStarts[Int(ranks[word]) + below.nonzeroBitCount])
    }
}
