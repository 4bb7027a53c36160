import CPrefetch

// Reads that bring buckets and records into the cache ahead of the work that needs them. A lookup
// waits for two cache misses in turn (the bucket, then the record it names); for many keys at once
// these reads are issued first, for all the keys, with nothing depending on them, so the
// processor has them in flight together and the lookups that follow find them cached. For one
// key, a write asks for its bucket before it encodes and appends its record, so the miss is
// taken during that work instead of after it. They change nothing the index means: only
// `touchedSum`, which nothing reads, and the cache.

extension KeyIndex {
    /// Starts loading the home bucket of `key` (its UTF-8 bytes), which a set or remove of it
    /// will read and write: a prefetch hint, which retires at once and never faults, so the work
    /// between this call and the lookup runs while the bucket travels from memory.
    @inline(__always)
    func prefetchHome(of key: UnsafeRawBufferPointer) {
        guard !entries.isEmpty else { return }
        let bucket = home(hash(key))
        entries.withUnsafeBufferPointer { buckets in
            if let base = buckets.baseAddress { cprefetch_for_write(base + bucket) }
        }
    }

    /// Reads the home bucket of each hash, so that the buckets are in the cache when the keys are
    /// filed: the reads do not depend on each other, so the processor has them all in flight at
    /// once instead of waiting for one cache miss per record.
    mutating func touchHomes(of hashes: UnsafeBufferPointer<UInt32>) {
        guard !entries.isEmpty else { return }
        var sum: UInt32 = 0
        entries.withUnsafeBufferPointer { buckets in
            for hash in hashes { sum &+= buckets[home(hash)].location }
        }
        touchedSum = sum
    }

    /// Reads the buckets of each hash and then the first byte of the record each names (the first
    /// bucket of its probe whose tag is the hash's, as it is for a key that is present): the two
    /// cache misses of each of the lookups of these keys that follow, taken for all the keys at
    /// once; then the rest of each record's cache lines. `mirror` is the mirror the index's
    /// records are in.
    mutating func touchRecords(ofHashes hashes: UnsafeBufferPointer<UInt32>, in mirror: UnsafeRawBufferPointer) {
        guard !entries.isEmpty, !hashes.isEmpty else { return }
        var sum: UInt32 = 0
        let mask = entries.count - 1
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: hashes.count) { starts in
            entries.withUnsafeBufferPointer { buckets in
                for (position, hash) in hashes.enumerated() {
                    // The probe's first buckets share the home bucket's cache line or the next one.
                    var bucketIndex = home(hash)
                    var location: UInt32 = 0
                    for _ in 0..<8 {
                        let bucket = buckets[bucketIndex]
                        if bucket.isEmpty { break }
                        if bucket.tag == hash {
                            location = bucket.location
                            break
                        }
                        bucketIndex = (bucketIndex + 1) & mask
                    }
                    starts[position] = location
                }
            }
            for location in starts where location != 0 && Int(location) <= mirror.count {
                sum &+= UInt32(mirror[Int(location) - 1])
            }
            // With each record's first line cached, its header gives its length: the rest of its
            // lines are read too, for the value that the caller reads next.
            for location in starts where location != 0 {
                guard let slot = Self.slot(ofRecordAt: Int(location) - 1, repaired: false, in: mirror) else { continue }
                var line = (Int(location) - 1) & ~63 + 64
                while line < slot.valueRange.upperBound {
                    sum &+= UInt32(mirror[line])
                    line += 64
                }
            }
        }
        touchedSum = sum
    }
}
