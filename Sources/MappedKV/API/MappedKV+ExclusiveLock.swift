// Exclusive sections: a stretch of calls no other thread or process can interleave with (MMKV's
// `lock()`/`unlock()`/`try_lock()`), as a closure (`withExclusiveLock`, `tryExclusiveLock`, and
// an async `withExclusiveLock` that does not block a thread while it waits) or as a guard value
// (`lock()`, `tryLock()`). The invariant this file keeps: every section begun is ended exactly once,
// on the thread that began it, whatever the body throws (Sharing/ExclusiveSection.swift has the
// mechanism).
//
// Errors: the functions are generic over the body's error type and throw `any Error`: an error
// the body throws reaches the caller unchanged (same type, same value, so `catch is MyError` works),
// and the store's own errors are `MappedKVError`s. A wrapper such as `enum Failure<E> { case store,
// body(E) }` would be typed but would hide the body's error behind a case (and a store error thrown
// through the transaction would arrive in either case); a typed overload for `E == MappedKVError`
// would only be chosen for closures annotated `throws(MappedKVError)`, since Swift infers untyped
// closures, and is ambiguous with a trailing closure.

extension MappedKV {
    /// Runs `body` holding the store's exclusive lock, waiting for it if another thread or
    /// process holds it: nothing else reads or writes the store until `body` returns, so a
    /// read-modify-write in it is atomic across threads and processes (MMKV's `lock()` and
    /// `unlock()` around a block).
    ///
    /// `body` gets a ``Transaction`` with every read and write of the store. Calls on the store
    /// itself (this handle or another one on the same files) from `body`'s thread are served
    /// under the same lock, and sections nest: a `withExclusiveLock` inside `body` just runs.
    /// Calls from other threads wait until `body` returns. The result may be any type.
    ///
    /// - Throws: an error `body` throws, unchanged (same type, same value); the store's own
    ///   errors (the store is closed, taking the lock failed) are ``MappedKVError``s.
    ///
    /// ```swift
    /// struct OutOfStock: Error {}
    /// do {
    ///     let left = try store.withExclusiveLock { tx in
    ///         let left = try tx.int32(forKey: "stock") ?? 0
    ///         guard left > 0 else { throw OutOfStock() }
    ///         try tx.set(left - 1, forKey: "stock")
    ///         return left - 1
    ///     }
    ///     print("left:", left)
    /// } catch is OutOfStock {
    ///     print("sold out")
    /// }
    /// ```
    public func withExclusiveLock<R, E: Error>(_ body: (Transaction) throws(E) -> R) throws -> R {
        try ensureOpen()
        _ = try shared.beginExclusiveSection(.block)
        return try inExclusiveSection(body)
    }

    /// Runs `body` under the exclusive lock, as ``withExclusiveLock(_:)``, if nobody else holds it
    /// right now (MMKV's `try_lock()`); returns nil at once if another process or another thread of
    /// this process holds it. On the thread that holds it already, it nests and runs `body`.
    ///
    /// - Throws: as ``withExclusiveLock(_:)``: `body`'s errors unchanged, the store's as ``MappedKVError``s.
    ///
    /// ```swift
    /// if let seen = try store.tryExclusiveLock({ tx in try tx.int64(forKey: "seen") }) {
    ///     print("seen:", seen ?? 0)
    /// } else {
    ///     print("another process holds the store locked")
    /// }
    /// ```
    public func tryExclusiveLock<R, E: Error>(_ body: (Transaction) throws(E) -> R) throws -> R? {
        try ensureOpen()
        guard try shared.beginExclusiveSection(.tryOnce) else { return nil }
        return try inExclusiveSection(body)
    }

    /// Runs `body` under the exclusive lock if nobody else holds it right now; nil otherwise.
    @available(*, deprecated, renamed: "tryExclusiveLock(_:)")
    public func tryLock<R: Sendable>(_ body: (Transaction) throws -> R) throws -> R? {
        try tryExclusiveLock(body)
    }

    /// Waits for the store's exclusive lock without blocking a thread, then runs `body` holding it,
    /// as the synchronous ``withExclusiveLock(_:)`` does.
    ///
    /// While another thread or process holds the lock the task sleeps between attempts (1 ms,
    /// doubling up to 50 ms), so Swift's cooperative threads stay free for other tasks; `body`
    /// itself is synchronous and runs to completion once the lock is taken. It runs on the
    /// caller's actor, so the result may be any type.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while waiting (nothing ran); an
    ///   error `body` throws, unchanged; or a ``MappedKVError`` from the store.
    ///
    /// ```swift
    /// let total = try await store.withExclusiveLock { tx in
    ///     let total = (try tx.int64(forKey: "total") ?? 0) + 5
    ///     try tx.set(total, forKey: "total")
    ///     return total
    /// }
    /// ```
    public func withExclusiveLock<R, E: Error>(
        isolation: isolated (any Actor)? = #isolation, _ body: (Transaction) throws(E) -> R
    ) async throws -> R {
        var pause = Duration.milliseconds(1)
        while true {
            try Task.checkCancellation()
            try ensureOpen()
            if try shared.beginExclusiveSection(.tryWithoutBlocking) { return try inExclusiveSection(body) }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// Takes the store's exclusive lock and returns it as a guard held until ``ExclusiveLock/unlock()``
    /// or the guard's end of scope (MMKV's `lock()`), for code written as lock/unlock pairs.
    ///
    /// While the guard is held, calls on the store from the thread that holds it (on this handle
    /// or another one on the same files) run under the lock, so together they are atomic across
    /// threads and processes; calls from other threads, and other processes, wait. Taking it again
    /// on the same thread nests. Release it on the thread that took it, and not across an `await`:
    /// in async code use `await withExclusiveLock(_:)` instead.
    ///
    /// ```swift
    /// let held = try store.lock()
    /// let n = try store.int64(forKey: "n") ?? 0
    /// try store.set(n + 1, forKey: "n")
    /// held.unlock()
    /// ```
    @available(*, noasync, message: "in async code use await withExclusiveLock, which waits without blocking a thread")
    public func lock() throws(MappedKVError) -> ExclusiveLock {
        try ensureOpen()
        _ = try shared.beginExclusiveSection(.block)
        return ExclusiveLock(store: self)
    }

    /// Takes the store's exclusive lock as ``lock()`` does if nobody else holds it right now (MMKV's
    /// `try_lock()`); returns nil at once if another process or another thread of this process holds it.
    ///
    /// ```swift
    /// if let held = try store.tryLock() {
    ///     try store.set(true, forKey: "maintenance")
    ///     held.unlock()
    /// }
    /// ```
    @available(*, noasync, message: "in async code use await withExclusiveLock, which waits without blocking a thread")
    public func tryLock() throws(MappedKVError) -> ExclusiveLock? {
        try ensureOpen()
        guard try shared.beginExclusiveSection(.tryOnce) else { return nil }
        return ExclusiveLock(store: self)
    }

    /// Runs `body` with a transaction in the section this thread has just begun, then ends the section.
    /// The transaction is the spare one of an earlier section when there is one (taken out, so a
    /// nested section makes its own), and becomes the spare afterwards if `body` kept no reference
    /// to it: a transaction anyone kept is never made active again.
    private func inExclusiveSection<R, E: Error>(_ body: (Transaction) throws(E) -> R) throws(E) -> R {
        // Only this function stores the spare, always a Transaction.
        var transaction = shared.spareTransaction.take().map { unsafeDowncast($0, to: Transaction.self) }
        if let spare = transaction { spare.begin() } else { transaction = Transaction(shared: shared) }
        defer {
            if var ended = transaction.take() {
                ended.end()
                if isKnownUniquelyReferenced(&ended) { shared.spareTransaction = ended }
            }
            shared.endExclusiveSection()
            reportChanges()
        }
        // Not nil: set just above, and taken only by the deferred block.
        return try body(transaction.unsafelyUnwrapped)
    }

    /// ``withExclusiveLock(_:)`` for the package's own sections, whose bodies throw only the
    /// store's errors: those come out as they are, with their type.
    func exclusively<R>(_ body: (Transaction) throws(MappedKVError) -> R) throws(MappedKVError) -> R {
        do {
            return try withExclusiveLock { (transaction) throws(MappedKVError) -> R in try body(transaction) }
        } catch let error as MappedKVError {
            throw error
        } catch {
            throw .invalidArgument("\(error)")
        }
    }
}
