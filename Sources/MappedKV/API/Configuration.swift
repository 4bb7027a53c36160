import MappedKVCrypto

/// How a store is opened.
public struct Configuration: Sendable, Equatable {
    /// Open without writing anything; both files must exist.
    public var isReadOnly: Bool
    /// The data file's minimum size in bytes, rounded up to whole pages (MMKV's `expectedCapacity`).
    public var expectedCapacity: Int
    /// The encryption key, or nil for a plain store. Nothing in the files says whether a store is
    /// encrypted: opening with the wrong key (or none) fails with ``CorruptionReason/undecodable(_:)``.
    public var cryptKey: CryptKey?

    /// Creates a configuration; the defaults open a plain store read-write with a one-page file.
    public init(isReadOnly: Bool = false, expectedCapacity: Int = 0, cryptKey: CryptKey? = nil) {
        self.isReadOnly = isReadOnly
        self.expectedCapacity = expectedCapacity
        self.cryptKey = cryptKey
    }
}
