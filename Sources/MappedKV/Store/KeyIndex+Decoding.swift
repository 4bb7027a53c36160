import MappedKVFormat

// Building the index from records: the one decode loop behind a load, a recovery's kept prefix
// and another process's appended tail. The last record of a key wins; a deletion removes it.
//
// An empty index decoding a whole region builds in one go: each record becomes a 64-bit word of
// its key's hash, a deletion bit and where it starts; the words are sorted by hash (a stable
// radix sort, so a key's records stay in file order); each run of equal hashes keeps the last
// record of each key unless it is a deletion; and the survivors fill the table front to back,
// since a key's home bucket is the top bits of its hash. No step reads the table at random, so a
// million keys cost no cache miss each. Any other decode (an appended tail) files records in
// groups whose home buckets are read first, so that their cache misses overlap.
extension KeyIndex {
    /// How many records are decoded before they are filed, on the incremental path.
    private static let groupSize = 32
    /// The deletion bit of a record word; the hash is above it, the record's start below.
    private static let deletionBit: UInt64 = 1 << 32

    /// Decodes the records of `mirror` from `start` (from the holder on when `start` is 0) into
    /// the index. Also says whether any key is not UTF-8 (a sign of a wrong key, for an encrypted
    /// store); such keys are filed under their UTF-8 repair (see ``ValueSlot/keyIsRepaired``).
    mutating func decodeRecords(
        of mirror: [UInt8], from start: Int
    ) -> (summary: DecodeSummary, hasNonUTF8Key: Bool) {
        if start == 0 && isEmpty { return build(from: mirror) }
        var hasNonUTF8Key = false
        var slots: [ValueSlot] = []
        var hashes: [UInt32] = []
        var deletions: [Bool] = []
        slots.reserveCapacity(Self.groupSize)
        hashes.reserveCapacity(Self.groupSize)
        deletions.reserveCapacity(Self.groupSize)
        let summary = mirror.withUnsafeBytes { bytes in
            let summary = RecordDecoder.decode(bytes, from: start, skipsHolder: start == 0) { record in
                var slot = ValueSlot(record)
                slot.keyIsRepaired = !UTF8Check.isValid(UnsafeRawBufferPointer(rebasing: bytes[record.keyRange]))
                if slot.keyIsRepaired { hasNonUTF8Key = true }
                slots.append(slot)
                hashes.append(hash(of: slot, in: bytes))
                deletions.append(record.isDeletion)
                if slots.count == Self.groupSize {
                    file(slots, hashes: hashes, deletions: deletions, in: bytes)
                    slots.removeAll(keepingCapacity: true)
                    hashes.removeAll(keepingCapacity: true)
                    deletions.removeAll(keepingCapacity: true)
                }
            }
            file(slots, hashes: hashes, deletions: deletions, in: bytes)
            return summary
        }
        return (summary, hasNonUTF8Key)
    }

    /// Files a group of decoded records, in order, after reading their home buckets.
    private mutating func file(
        _ slots: [ValueSlot], hashes: [UInt32], deletions: [Bool], in mirror: UnsafeRawBufferPointer
    ) {
        hashes.withUnsafeBufferPointer { touchHomes(of: $0) }
        for position in slots.indices {
            let slot = slots[position]
            if slot.keyIsRepaired {
                if deletions[position] {
                    remove(keyOf: slot, in: mirror)
                } else {
                    update(slot, in: mirror)
                }
                continue
            }
            let key = UnsafeRawBufferPointer(rebasing: mirror[slot.keyRange])
            if deletions[position] {
                remove(key, hash: hashes[position], in: mirror)
            } else {
                _ = update(slot, key: key, hash: hashes[position], in: mirror)
            }
        }
    }

    /// Builds this empty index from every record of `mirror` (see the top of this file).
    private mutating func build(from mirror: [UInt8]) -> (summary: DecodeSummary, hasNonUTF8Key: Bool) {
        var hasNonUTF8Key = false
        var words: [UInt64] = []
        // At least four bytes a record: room for every record without regrowing (pages that
        // are never written are never made resident).
        words.reserveCapacity(mirror.count / 4 + 1)
        var repairedStarts = Set<UInt32>()
        var liveBytes = 0
        let hasher = self
        let summary = mirror.withUnsafeBytes { bytes in
            RecordDecoder.decode(bytes, from: 0, skipsHolder: true) { record in
                let key = UnsafeRawBufferPointer(rebasing: bytes[record.keyRange])
                let hash: UInt32
                if UTF8Check.isValid(key) {
                    hash = hasher.hash(key)
                } else {
                    hasNonUTF8Key = true
                    repairedStarts.insert(UInt32(truncatingIfNeeded: record.start))
                    hash = Array(String(decoding: key, as: UTF8.self).utf8).withUnsafeBytes { hasher.hash($0) }
                }
                if !record.isDeletion { liveBytes += record.end - record.start }
                words.append(
                    UInt64(hash) << 33 | (record.isDeletion ? Self.deletionBit : 0)
                        | UInt64(truncatingIfNeeded: record.start))
            }
        }
        RadixSort.sort(&words, byBits: 33..<64)
        // The survivors are moved to the front of `words` (no second array: its pages would stay
        // with the allocator after the load).
        var kept = 0
        mirror.withUnsafeBytes { bytes in
            var first = 0
            while first < words.count {
                let hash = words[first] >> 33
                var end = first + 1
                while end < words.count, words[end] >> 33 == hash { end += 1 }
                if end == first + 1 {
                    if words[first] & Self.deletionBit == 0 {
                        words[kept] = words[first]
                        kept += 1
                    }
                } else {
                    var survivors: [UInt64] = []
                    liveBytes -= Self.keepLastOfEachKey(
                        words[first..<end], repairedStarts: repairedStarts, in: bytes, into: &survivors)
                    for word in survivors {
                        words[kept] = word
                        kept += 1
                    }
                }
                first = end
            }
        }
        words.removeLast(words.count - kept)
        fill(hashOrdered: words, repairedStarts: repairedStarts, recordBytes: liveBytes)
        return (summary, hasNonUTF8Key)
    }

    /// Appends to `survivors` the last record of each key among `run` (records whose keys share a
    /// hash, in file order) unless it is a deletion; returns the bytes of the records that are
    /// not deletions and were not kept.
    private static func keepLastOfEachKey(
        _ run: ArraySlice<UInt64>, repairedStarts: Set<UInt32>, in mirror: UnsafeRawBufferPointer,
        into survivors: inout [UInt64]
    ) -> Int {
        var dropped = 0
        var decided: [ValueSlot] = []
        for word in run.reversed() {
            let start = UInt32(truncatingIfNeeded: word)
            guard
                let slot = slot(
                    ofRecordAt: Int(start), repaired: repairedStarts.contains(start), in: mirror)
            else { continue }
            let isDeletion = word & deletionBit != 0
            if decided.contains(where: { sameKey($0, slot, in: mirror) }) {
                if !isDeletion { dropped += slot.recordRange.count }
                continue
            }
            decided.append(slot)
            if !isDeletion { survivors.append(word) }
        }
        return dropped
    }

    /// Whether two records are of the same key: the same bytes, or the same UTF-8 repair when
    /// either key is not UTF-8 (as the index files such keys).
    private static func sameKey(_ a: ValueSlot, _ b: ValueSlot, in mirror: UnsafeRawBufferPointer) -> Bool {
        guard a.keyIsRepaired || b.keyIsRepaired else {
            return mirror[a.keyRange].elementsEqual(mirror[b.keyRange])
        }
        return String(decoding: mirror[a.keyRange], as: UTF8.self).utf8
            .elementsEqual(String(decoding: mirror[b.keyRange], as: UTF8.self).utf8)
    }
}
