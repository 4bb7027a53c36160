import MappedKVFormat

// Building the index from records: the one decode loop behind a load, a recovery's kept prefix
// and another process's appended tail. The last record of a key wins; a deletion removes it.
//
// Records are filed in groups: a group's keys are hashed and their home buckets read first, then
// the records are filed one by one in file order. Filing order, and so the result, is the same
// as filing each record as it is decoded; only the cache misses overlap.
extension KeyIndex {
    /// How many records are decoded before they are filed.
    private static let groupSize = 32

    /// Decodes the records of `mirror` from `start` (from the holder on when `start` is 0) into
    /// the index. Also says whether any key is not UTF-8 (a sign of a wrong key, for an encrypted
    /// store); such keys are filed under their UTF-8 repair (see ``ValueSlot/keyIsRepaired``).
    mutating func decodeRecords(
        of mirror: [UInt8], from start: Int
    ) -> (summary: DecodeSummary, hasNonUTF8Key: Bool) {
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
}
