import Synchronization

extension MappedKV {
    /// Whether the store was opened to be shared with other processes.
    public var isMultiProcess: Bool { configuration.isMultiProcess }

    /// Runs `body` holding the store's exclusive lock: no other thread or process reads or
    /// writes the store until it returns, so a read-modify-write in it is atomic (MMKV's
    /// `lock()`/`unlock()`). Calls on `self` from inside `body` would deadlock: use the
    /// transaction it is given.
    ///
    /// ```swift
    /// let next = try store.withExclusiveLock { tx in
    ///     let value = try tx.int64(forKey: "counter") ?? 0
    ///     try tx.set(value + 1, forKey: "counter")
    ///     return value + 1
    /// }
    /// ```
    public func withExclusiveLock<R: Sendable>(_ body: (Transaction) throws -> R) throws -> R {
        guard let result = try locked(blocking: true, body) else {
            throw MappedKVError.closed("the exclusive lock could not be taken")
        }
        return result
    }

    /// Runs `body` under the exclusive lock if no other process holds the store locked right now
    /// (MMKV's `try_lock()`); returns nil without waiting otherwise. In single-process mode the
    /// store is this process's alone, so the lock is always available.
    public func tryLock<R: Sendable>(_ body: (Transaction) throws -> R) throws -> R? {
        try locked(blocking: false, body)
    }

    private func locked<R: Sendable>(blocking: Bool, _ body: (Transaction) throws -> R) throws -> R? {
        try ensureOpen()
        defer { reportChanges() }
        return try shared.core.withLock { core throws -> R? in
            // The transaction lends the locked core to `body` for the duration of the call only.
            let lent = LentCore(core: core)
            return try lent.core.withExclusiveLock(blocking: blocking) { () throws -> R in
                let transaction = Transaction(core: lent.core)
                defer { transaction.end() }
                return try body(transaction)
            }
        }
    }

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

/// The store core lent to a transaction while its mutex is held; the transaction ends (and stops
/// using it) before the mutex is released, which is what makes the unchecked conformance sound.
private struct LentCore: @unchecked Sendable {
    let core: StoreCore
}
