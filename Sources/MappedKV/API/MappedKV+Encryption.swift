// The store's current key (MMKV's `cryptKey()`): the one it was opened with, or the one the
// last ``MappedKV/rekey(to:)`` or ``MappedKV/adoptCryptKey(_:)`` set.
extension MappedKV {
    /// The key the store is encrypted with now, or nil for a plain store.
    public var cryptKey: CryptKey? {
        shared.core.withLock { core in core.cryptKey }
    }
}
