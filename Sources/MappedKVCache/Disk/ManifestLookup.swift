import MappedKVFormat

// What a read of a disk cache finds under an entry key, judged where the record lies in the
// manifest's memory. The invariant: `.inline` carries a value whose length and CRC are the
// recorded ones and that has not expired; anything that cannot be served that way is `.file`
// (to be read and checked) or `.unusable` (to be dropped), with the record's bytes to compare
// against before dropping.

/// What a read found in the manifest under an entry key.
enum ManifestLookup: Sendable {
    /// A served value and the metadata a read returns.
    struct Found: Sendable {
        /// The value's bytes.
        var value: [UInt8]
        /// When it was set, in milliseconds since 1970.
        var modified: UInt64
        /// When it expires, in milliseconds since 1970, or nil.
        var expiry: UInt64?
        /// The caller's extended data, if it has any and it was asked for.
        var extendedData: [UInt8]?
    }

    /// A live inline value with the recorded size and CRC.
    case inline(Found)
    /// A live record whose value is in a file that has a valid name: the record's bytes, decoded
    /// by the reader (the file is read outside the manifest's lock; the bytes also tell whether
    /// the record is still the same when a bad file is dropped). Kept this small, the enum is
    /// copied and destroyed without calls through its type's value witnesses.
    case file(raw: [UInt8])
    /// A record that cannot serve: damaged, expired, or an inline value that is not the recorded one.
    case unusable(raw: [UInt8])

    /// Judges the record in `raw` at `now` (milliseconds since 1970), copying only what it returns:
    /// for an inline value, the value (and the extended data if `withExtendedData`).
    init(_ raw: UnsafeRawBufferPointer, at now: UInt64, withExtendedData: Bool) {
        guard let view = CacheEntryRecordView(raw), !view.isExpired(at: now) else {
            self = .unusable(raw: Array(raw))
            return
        }
        if view.isInline {
            guard let value = view.intactInlineValue(in: raw) else {
                self = .unusable(raw: Array(raw))
                return
            }
            self = .inline(
                Found(
                    value: value, modified: view.modified, expiry: view.expiry,
                    extendedData: withExtendedData ? view.extendedDataBytes(in: raw) : nil))
        } else if view.fileName(in: raw) != nil {
            self = .file(raw: Array(raw))
        } else {
            self = .unusable(raw: Array(raw))
        }
    }
}
