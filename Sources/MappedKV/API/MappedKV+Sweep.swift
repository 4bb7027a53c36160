// Sweeps: removing the entries a caller picks (expired sessions, stale cache rows) in bounded
// steps, each one exclusive section over the keys of one hash range, so that no other thread or
// process waits for more than a step while a large store is tidied. Between steps the lock is
// free and the store may change: a key present for the whole sweep is offered exactly once (the
// ranges tile the hash space, whatever happens to the table in between); a key added or changed
// meanwhile may or may not be, and the next sweep sees it.

/// Where a sweep resumes: the start of the next step's hash range.
public struct SweepCursor: Sendable, Hashable {
    /// The first hash of the next step's range.
    let nextHash: UInt64

    /// The beginning of a sweep.
    public static let start = SweepCursor(nextHash: 0)
}

/// What one step of a sweep did.
public struct SweepStep: Sendable, Equatable {
    /// The keys the step removed.
    public let removed: Int
    /// The keys the step looked at.
    public let visited: Int
    /// Where the next step begins, or nil when the sweep has covered every key.
    public let next: SweepCursor?
}

extension MappedKV {
    /// Runs one step of a sweep from `cursor`: in one exclusive section, looks at the keys of the
    /// next hash range (about `keyLimit` of them) and removes those `shouldRemove` picks, and those
    /// whose value has expired when key expiry is on, in one append.
    ///
    /// Call it from ``SweepCursor/start`` until ``SweepStep/next`` is nil; between calls other
    /// threads and processes read and write as usual. Pause between steps (a millisecond is
    /// plenty): the lock is not fair, and a step taken at once after the last can keep a process
    /// that waits for the lock out until the sweep ends.
    ///
    /// ```swift
    /// var cursor: SweepCursor? = .start
    /// while let from = cursor {
    ///     let step = try store.sweepStep(from: from) { key, _ in key.hasPrefix("tmp/") }
    ///     cursor = step.next
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - cursor: where the step begins.
    ///   - keyLimit: about how many keys the step looks at (hashes are spread evenly, so a step's
    ///     range holds about this many); at least 1.
    ///   - shouldRemove: whether to remove a key, given the key and its stored payload bytes (the
    ///     encoding of docs/FORMAT.md 2.5, without an expiry suffix). It runs under the store's
    ///     locks, so it must not call the store. Keys beginning with U+0001 (a ``StoreKind``'s
    ///     marks, a turn's record) and keys that are not UTF-8 are never offered.
    /// - Returns: what the step removed and looked at, and where the next one begins.
    public func sweepStep(
        from cursor: SweepCursor, keyLimit: Int = 2048,
        removing shouldRemove: (_ key: String, _ payload: UnsafeRawBufferPointer) -> Bool
    ) throws(MappedKVError) -> SweepStep {
        try runSweepStep(from: cursor, keyLimit: keyLimit) { key, payload in
            shouldRemove(String(decoding: key, as: UTF8.self), payload)
        }
    }

    /// One step of a sweep that removes only the keys whose value has expired (key expiry), as
    /// ``sweepStep(from:keyLimit:removing:)``; on a store without key expiry it removes nothing.
    public func removeExpiredKeysStep(from cursor: SweepCursor, keyLimit: Int = 2048) throws(MappedKVError) -> SweepStep
    {
        try runSweepStep(from: cursor, keyLimit: keyLimit) { _, _ in false }
    }

    /// The step itself, in the exclusive section.
    private func runSweepStep(
        from cursor: SweepCursor, keyLimit: Int,
        _ shouldRemove: (_ key: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) -> Bool
    ) throws(MappedKVError) -> SweepStep {
        guard keyLimit > 0 else {
            throw .invalidArgument("a sweep step's key limit must be at least 1, not \(keyLimit)")
        }
        guard cursor.nextHash < KeyIndex.hashSpace else { return SweepStep(removed: 0, visited: 0, next: nil) }
        let outcome = try exclusively { _ throws(MappedKVError) -> StoreCore.SweepOutcome in
            try withCore { (core) throws(MappedKVError) -> StoreCore.SweepOutcome in
                try core.sweepStep(from: cursor.nextHash, keyLimit: keyLimit, shouldRemove)
            }
        }
        if outcome.removed > 0 { metrics?.countRemove() }
        let next = outcome.next < KeyIndex.hashSpace ? SweepCursor(nextHash: outcome.next) : nil
        return SweepStep(removed: outcome.removed, visited: outcome.visited, next: next)
    }
}
