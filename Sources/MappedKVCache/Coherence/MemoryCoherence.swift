import MappedKV

// Keeping a `Cache`'s memory tier true to the disk side it caches.
//
// Invariant: when a change to the shared manifest (another process's, or another cache's of this
// process) has been applied here, no key it changed is left in memory with an older value. Every
// drop bumps the key's invalidation counter before removing the key, so a fill that read the disk
// before the drop does not keep what it read (see `InvalidationCounters`). This runs while the
// manifest delivers its changes, so it calls nothing that waits for another thread's delivery:
// events for observers go to their queue.

/// Applies changes of the disk side to one cache's memory tier.
struct MemoryCoherence<Value: Sendable>: Sendable {
    let memory: MemoryCache<String, Value>
    let invalidations: InvalidationCounters
    let observers: CacheObservers
    let disk: DiskCache

    /// Another process changed the manifest: drops what it changed (everything, when it cannot
    /// tell) and tells observers which entries were set or removed there.
    func apply(_ change: ExternalChange) {
        guard let storeKeys = change.changedKeys else {
            dropAll()
            if observers.isObserved, (try? disk.manifest.count) == 0 {
                observers.tellLater([CacheEvent(.didRemoveAll, key: nil, tier: .disk, origin: .otherProcess)])
            }
            return
        }
        let keys = storeKeys.compactMap(DiskCache.cacheKey(ofEntryKey:))
        guard !keys.isEmpty else { return }  // access times only
        drop(keys)
        guard observers.isObserved else { return }
        let events = keys.map { key in
            let present = (try? disk.manifest.contains(DiskCache.entryKey(key))) ?? false
            return CacheEvent(present ? .didAdd : .didRemove, key: key, tier: .disk, origin: .otherProcess)
        }
        observers.tellLater(events)
    }

    /// Another cache of this process on the directory (or the disk side itself) wrote, or a trim
    /// of this process removed entries (told to observers as disk evictions and expiries).
    func apply(_ change: CacheKeyChange) {
        switch change {
        case .keys(let keys): drop(keys)
        case .all: dropAll()
        case .trimmed(let evicted, let expired):
            drop(evicted + expired)
            observers.tellLater(
                evicted.map { CacheEvent(.didEvict, key: $0, tier: .disk) }
                    + expired.map { CacheEvent(.didExpire, key: $0, tier: .disk) })
        }
    }

    /// Drops `keys` from memory, each counter bumped first.
    func drop(_ keys: [String]) {
        invalidations.bump(keys)
        for key in keys { memory.removeValue(forKey: key) }
    }

    /// Empties memory, every counter bumped first.
    func dropAll() {
        invalidations.bumpAll()
        memory.removeAll()
    }
}
