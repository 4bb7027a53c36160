import MappedKVFormat

// Which keys another process's appended records touched, for change notifications.
//
// The invariant: the records named are exactly those decoded from the tail, in file order, set and
// removed alike (each marked by whether it removes its key), their keys spelled as `allKeys` spells
// them (a key that is not UTF-8 by its UTF-8 repair), so a subscriber can look them up.
extension StoreCore {
    /// The key of each record in `mirror[start...]`, in file order, and whether it removes the key,
    /// read the way ``KeyIndex/decodeRecords(of:from:)`` reads them (skipping the item-size holder
    /// when `start` is 0).
    static func records(ofRecordsIn mirror: [UInt8], from start: Int) -> [ExternalChange.Record] {
        mirror.withUnsafeBytes { bytes in
            var records: [ExternalChange.Record] = []
            _ = RecordDecoder.decode(bytes, from: start, skipsHolder: start == 0) { record in
                records.append(
                    ExternalChange.Record(
                        key: String(decoding: bytes[record.keyRange], as: UTF8.self), removes: record.isDeletion))
            }
            return records
        }
    }
}
