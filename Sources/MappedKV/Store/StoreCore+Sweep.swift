import MappedKVFormat

// One step of a sweep: the keys of one hash range (KeyIndex+HashRanges.swift) are read and the
// ones to go are removed in one batch (one append), so a step costs about what its range holds,
// never what the store holds. The invariants: the caller holds the exclusive section across the
// read and the removal, so a value written meanwhile by another process is never removed on the
// strength of the value it replaced; keys that begin with U+0001 (a store kind's marks, a turn's
// record) are never offered or removed; keys that are not UTF-8 are skipped, since a `String`
// cannot name them.
extension StoreCore {
    /// What one step did: the keys it removed, the keys it looked at, and where the next begins
    /// (``KeyIndex/hashSpace`` when the sweep is over).
    struct SweepOutcome {
        var removed: Int
        var visited: Int
        var next: UInt64
    }

    /// Visits the keys whose hashes lie from `lo` on, about `keyLimit` of them, and removes those
    /// whose value has expired (key expiry) or that `shouldRemove` picks. `shouldRemove` sees the
    /// key and its live payload where they lie, under the store's lock: it must not call the store.
    func sweepStep(
        from lo: UInt64, keyLimit: Int,
        _ shouldRemove: (_ key: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer) -> Bool
    ) throws(MappedKVError) -> SweepOutcome {
        try prepareRead()
        let hi = loaded.index.hashRangeEnd(from: lo, holdingAbout: keyLimit)
        let now = configuration.clock.now()
        var doomed: [String] = []
        var visited = 0
        loaded.mirror.withUnsafeBytes { bytes in
            loaded.index.forEachSlot(hashesFrom: lo, below: hi, in: bytes) { slot, repaired in
                let key = UnsafeRawBufferPointer(rebasing: bytes[slot.keyRange])
                guard !repaired, key.first != 1 else { return }
                visited += 1
                guard let range = liveValueRange(slot, now: now, in: bytes) else {
                    doomed.append(String(decoding: key, as: UTF8.self))
                    return
                }
                if shouldRemove(key, UnsafeRawBufferPointer(rebasing: bytes[range])) {
                    doomed.append(String(decoding: key, as: UTF8.self))
                }
            }
        }
        let removed = doomed.isEmpty ? 0 : try removeValues(forKeys: doomed)
        return SweepOutcome(removed: removed, visited: visited, next: hi)
    }
}
