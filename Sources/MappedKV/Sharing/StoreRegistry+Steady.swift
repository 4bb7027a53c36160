// A backup's steady moment (docs/FORMAT.md 6.5): the store's files are read while nobody can write
// them, through this process's open instance if it has one. It lives here, above `Store/`, since
// only the registry knows the process's instances (docs/ARCHITECTURE.md 1).
extension StoreRegistry {
    /// Runs `body` while nobody can write the store at `location`: with this process's instance
    /// locked (and its shared `flock` held, in multi-process mode), or else with a shared lock of
    /// its own. Throws ``MappedKVError/storeNotFound(path:)`` if there is no meta file.
    static func withStoreSteady<R: Sendable>(
        _ location: StoreLocation, _ body: () throws(MappedKVError) -> R
    ) throws(MappedKVError) -> R {
        try withInstance(of: location) { (instance) throws(MappedKVError) -> R in
            if let instance {
                return try instance.core.withLock { (core) throws(MappedKVError) -> R in
                    let lent = HeldCore(core: core)
                    return try locked(lent.core, body)
                }
            }
            guard let held = try DetachedStoreLock.take(location, kind: .shared, writable: false) else {
                throw .storeNotFound(path: location.dataPath)
            }
            return try withExtendedLifetime(held) { () throws(MappedKVError) -> R in try body() }
        }
    }

    private static func locked<R>(_ core: StoreCore, _ body: () throws(MappedKVError) -> R) throws(MappedKVError) -> R {
        try core.withFilesLocked(.shared) { (_) throws(MappedKVError) -> R in try body() }
    }
}

/// A store core used only while its instance's mutex is held, by a call that returns before the
/// mutex is released: what makes the unchecked conformance sound.
struct HeldCore: @unchecked Sendable {
    let core: StoreCore
}
