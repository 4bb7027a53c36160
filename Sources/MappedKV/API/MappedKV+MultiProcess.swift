import Synchronization

extension MappedKV {
    /// Whether the store was opened to be shared with other processes.
    public var isMultiProcess: Bool { configuration.isMultiProcess }

    /// Looks for changes by other processes now (MMKV's `checkContentChanged()`), catching up
    /// with them and reporting them to observers; true if there was one. Reads and writes do
    /// this check themselves; call this to hear of changes without reading.
    @discardableResult
    public func checkForChanges() throws(MappedKVError) -> Bool {
        try ensureOpen()
        defer { reportChanges() }
        return try shared.core.withLock { (core) throws(MappedKVError) -> Bool in try core.checkForChanges() }
    }
}
