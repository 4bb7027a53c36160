import MappedKVFormat

// Which keys another process's appended records touched, for change notifications.
//
// The invariant: the keys named are exactly those of the records decoded from the tail, set and
// removed alike, spelled as `allKeys` spells them (a key that is not UTF-8 by its UTF-8 repair), so
// a subscriber can look them up.
extension StoreCore {
    /// The keys of the records in `mirror[start...]`, read the way ``KeyIndex/decodeRecords(of:from:)``
    /// reads them (skipping the item-size holder when `start` is 0).
    static func keys(ofRecordsIn mirror: [UInt8], from start: Int) -> Set<String> {
        mirror.withUnsafeBytes { bytes in
            var keys = Set<String>()
            _ = RecordDecoder.decode(bytes, from: start, skipsHolder: start == 0) { record in
                keys.insert(String(decoding: bytes[record.keyRange], as: UTF8.self))
            }
            return keys
        }
    }
}
