// Key expiry beyond the basics in MappedKV.swift: keys and counts that include expired keys
// (MMKV's `filterExpire: false`), and expiry turned on by the configuration at open.
extension MappedKV {
    /// Every key, sorted by UTF-8 bytes; with `includingExpired`, also keys whose value has
    /// expired but whose record is still in the file (dropped at the next write-back).
    public func allKeys(includingExpired: Bool) throws(MappedKVError) -> [String] {
        guard includingExpired else { return try allKeys }
        return try withCore { (core) throws(MappedKVError) -> [String] in try core.allKeysIncludingExpired() }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    /// The number of keys; with `includingExpired`, expired keys still in the file count too.
    public func count(includingExpired: Bool) throws(MappedKVError) -> Int {
        guard includingExpired else { return try count }
        return try withCore { (core) throws(MappedKVError) -> Int in try core.countIncludingExpired() }
    }

    /// Applies ``Configuration/keyExpiry`` right after the open.
    func applyKeyExpiryAtOpen(_ defaultDuration: Duration) throws(MappedKVError) {
        guard !configuration.isReadOnly else {
            let seconds = MappedKV.expirySeconds(defaultDuration)
            shared.core.withLock { core in if core.loaded.expiryEnabled { core.defaultExpiryDuration = seconds } }
            return
        }
        try enableKeyExpiry(defaultDuration: defaultDuration)
    }
}
