// Memory and disk space held by an idle store (MMKV's `clearMemoryCache` and
// `clearAll(keepSpace:)`). Releasing memory never changes the files: the next access reloads
// and verifies them as a reload after another process's change does.
extension MappedKV {
    /// Frees the store's in-memory copy of its data and its key index; the next read or write
    /// reloads them from the files (MMKV's `clearMemoryCache`). Use it for a store that will sit
    /// idle for a while. The files stay open and mapped.
    public func releaseMemory() throws(MappedKVError) {
        try withCore { (core) throws(MappedKVError) in try core.releaseMemory() }
    }

    /// Removes every key. With `keepingSpace`, the data file keeps its size instead of
    /// shrinking to the expected capacity (MMKV's `clearAll(keepSpace: true)`), for a store that
    /// will be filled again; the old records are erased either way.
    public func clearAll(keepingSpace: Bool) throws(MappedKVError) {
        try withCore { (core) throws(MappedKVError) in try core.clearAll(keepingSpace: keepingSpace) }
    }
}
