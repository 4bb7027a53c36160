// Keys whatever their expiry (MMKV's `allKeys(filterExpire: false)` and `count(filterExpire:
// false)`): every key with a record in the index, expired or not, until the next write-back drops
// the expired ones (docs/FORMAT.md section 5).
extension StoreCore {
    /// Every key in the index, expired ones included, in no particular order.
    func allKeysIncludingExpired() throws(MappedKVError) -> [String] {
        try prepareRead()
        return loaded.mirror.withUnsafeBytes { bytes in
            var keys: [String] = []
            keys.reserveCapacity(loaded.index.count)
            loaded.index.forEachSlot(in: bytes) { slot in
                keys.append(String(decoding: bytes[slot.keyRange], as: UTF8.self))
            }
            return keys
        }
    }

    /// The number of keys in the index, expired ones included.
    func countIncludingExpired() throws(MappedKVError) -> Int {
        try prepareRead()
        return loaded.index.count
    }
}
