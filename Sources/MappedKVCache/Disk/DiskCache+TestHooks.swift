// What the tests need to see of the cache's background work, and nothing else uses.

extension DiskCache {
    /// The periodic trim's task; nil if the cache has none or is closed. A test awaits its end to
    /// know that no turn can run any more.
    package var backgroundTrimTask: Task<Void, Never>? { backgroundTrim.withLock { $0 } }
}
