// The guard form of an exclusive section. The invariant: a guard is the only owner of the section
// level it stands for, so that level ends exactly once, when the guard is consumed by `unlock()` or
// goes out of scope; being non-copyable and not `Sendable` keeps it so, and on its thread.

extension MappedKV {
    /// The store's exclusive lock, held until ``unlock()`` or the end of the guard's scope: what
    /// ``MappedKV/lock()`` and ``MappedKV/tryLock()`` return.
    ///
    /// Threading rules: while it is held, the holding thread's calls on the store run under the
    /// lock, other threads' calls and other processes wait; it cannot be copied or sent to another
    /// thread, and must not be held across an `await` (`lock()` is unavailable in async code).
    /// Bind it to a name: `_ = try store.lock()` would release it at once.
    ///
    /// ```swift
    /// let held = try store.lock()
    /// try store.set(Int32(1), forKey: "a")
    /// try store.set(Int32(2), forKey: "b")   // other processes see both or neither change
    /// held.unlock()
    /// ```
    public struct ExclusiveLock: ~Copyable {
        private let store: MappedKV

        init(store: MappedKV) { self.store = store }

        /// Releases the lock now (MMKV's `unlock()`); letting the guard go out of scope does the same.
        public consuming func unlock() {
            // Consuming the guard ends its life here, and its deinit releases the lock.
        }

        deinit {
            store.shared.endExclusiveSection()
            store.reportChanges()
        }
    }
}

@available(*, unavailable, message: "an exclusive lock is released on the thread that took it")
extension MappedKV.ExclusiveLock: Sendable {}
