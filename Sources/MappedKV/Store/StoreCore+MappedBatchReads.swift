// Reads of many keys in one call through the mappings (docs/FORMAT.md 12.5), for the batch reads
// of StoreCore+BatchedReads.swift and the package's reads by key bytes. Every payload is copied
// out of the shared mapping before the caller sees any: only then does the read check that no
// other process rewrote the region meanwhile, so the caller never holds bytes that may change
// under it, and every payload is from one state of the store, as a batch read's must be.
extension StoreCore {
    /// The live payloads of `count` keys, copied: `withKey` gives the lookup the bytes of the key
    /// at a position. Nil if the store does not read through its mappings (any more), for the
    /// caller to read as usual.
    func payloadsMapped(
        count: Int, withKey: (Int, (UnsafeRawBufferPointer) -> MappedLookup) -> MappedLookup
    ) throws(MappedKVError) -> CopiedPayloads? {
        try readingMapped { file, region -> CopiedPayloads? in
            var copied = CopiedPayloads()
            copied.ranges.reserveCapacity(count)
            for position in 0..<count {
                switch withKey(position, { mappedValueRange(forKey: $0, file: file, in: region) }) {
                case .damaged: return nil
                case .found(nil): copied.ranges.append(nil)
                case .found(let range?):
                    let start = copied.bytes.count
                    copied.bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: region.bytes[range]))
                    copied.ranges.append(start..<copied.bytes.count)
                }
            }
            return copied
        }
    }
}

/// Payloads copied out of the mapping: the bytes of each, one after another, and where each lies
/// (nil for an absent or expired key).
struct CopiedPayloads {
    var bytes: [UInt8] = []
    var ranges: [Range<Int>?] = []

    /// Calls `body` with each position and its payload, in order.
    func handOver(_ body: (_ position: Int, _ payload: UnsafeRawBufferPointer?) -> Void) {
        bytes.withUnsafeBytes { all in
            for (position, range) in ranges.enumerated() {
                body(position, range.map { UnsafeRawBufferPointer(rebasing: all[$0]) })
            }
        }
    }
}
