/// The size limits of records, MMKV's and MappedKV's own.
package enum RecordLimits {
    /// MMKV's reader rejects keys longer than this (`KeySizeLimit = UINT16_MAX - 4`).
    package static let mmkvMaximumKeyLength = 65_531
    /// MMKV's reader rejects records whose key-and-length header spans more bytes than this.
    package static let mmkvMaximumHeaderLength = 65_535
    /// The longest key MappedKV writes: 16 KiB, well inside both MMKV limits for any value size
    /// (a maximal header is then 3 + 16,384 + 5 bytes).
    package static let maximumKeyLength = 16_384
    /// The largest value payload MappedKV writes: MMKV reads value lengths as `Int32`, so 2 GiB and over are unreadable.
    package static let maximumValueLength = Int(Int32.max)
    /// The data region is addressed by `UInt32` offsets (meta `actualSize`).
    package static let maximumRegionLength = Int(UInt32.max)
}
