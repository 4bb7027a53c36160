import MappedKVFormat

// Building the index from records: the one decode loop behind a load, a recovery's kept prefix
// and another process's appended tail. The last record of a key wins; a deletion removes it.
extension KeyIndex {
    /// Decodes the records of `mirror` from `start` (from the holder on when `start` is 0) into
    /// the index. Also says whether any key is not UTF-8 (a sign of a wrong key, for an encrypted
    /// store); such keys are filed under their UTF-8 repair (see ``ValueSlot/keyIsRepaired``).
    mutating func decodeRecords(
        of mirror: [UInt8], from start: Int
    ) -> (summary: DecodeSummary, hasNonUTF8Key: Bool) {
        var hasNonUTF8Key = false
        let summary = mirror.withUnsafeBytes { bytes in
            RecordDecoder.decode(bytes, from: start, skipsHolder: start == 0) { record in
                var slot = ValueSlot(record)
                slot.keyIsRepaired = !UTF8Check.isValid(UnsafeRawBufferPointer(rebasing: bytes[record.keyRange]))
                if slot.keyIsRepaired { hasNonUTF8Key = true }
                if record.isDeletion {
                    remove(keyOf: slot, in: bytes)
                } else {
                    update(slot, in: bytes)
                }
            }
        }
        return (summary, hasNonUTF8Key)
    }
}
