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

    /// Catches up with other processes now, as ``checkForChanges()``, and returns only once every
    /// change noticed so far has reached the observers, waiting for a delivery in progress on
    /// another thread. For layers that keep state derived from the store in step with it (indexes
    /// of its keys, say): after this call their handlers have seen every change made before it. A handler must then not wait for the thread that calls this (one that
    /// only records what changed is safe). Inside an exclusive section it may be called on the
    /// thread that holds the section.
    public func synchronizeChanges() throws(MappedKVError) {
        _ = try withCore { (core) throws(MappedKVError) -> Bool in try core.checkForChanges() }
        shared.deliverChangesWaiting()
    }

    /// ``synchronizeChanges()`` for a hot path: catches up only if the meta stamp in the shared
    /// mapping moved since this process last looked (a few loads in the steady state: no mutex,
    /// no system call; Store/ObservedStamp.swift), and
    /// returns once every change noticed so far has reached the observers. It never waits for an
    /// exclusive section another thread holds (no other process can write meanwhile). A handler
    /// must not wait for the thread that calls this, nor call this itself.
    ///
    /// The steady state's check (this handle is open, the stamp is the published one, nothing is
    /// pending or being delivered) is inlined into the caller; the catch-up is a call. Inlined, a
    /// memory hit of a `Cache` no longer calls across modules.
    @inlinable
    package func synchronizeChangesIfMoved() throws(MappedKVError) {
        if !isClosed.load(ordering: .relaxed), observedStamp.isCurrent,
            !changeSignal.pending.load(ordering: .sequentiallyConsistent),
            !changeSignal.delivering.load(ordering: .sequentiallyConsistent)
        {
            return
        }
        try catchUpAndDeliver()
    }

    /// ``synchronizeChangesIfMoved()`` past its check: the handle is closed, the stamp moved, or
    /// changes are pending.
    @usableFromInline
    func catchUpAndDeliver() throws(MappedKVError) {
        try ensureOpen()
        try shared.catchUpAndDeliver()
    }

    /// Whether the stamp in the meta file is the one this process last caught up to or wrote, as
    /// ``synchronizeChangesIfMoved()`` checks it without the mutex: false while the store's memory
    /// is released, once it is closed, and after another process's write until a catch-up. For tests.
    package var observedStampIsCurrent: Bool { shared.observedStamp.isCurrent }
}
