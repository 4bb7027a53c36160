import Glibc
import Synchronization

// Writes to a cache directory made by this process, told to every `Cache` of this process on that
// directory.
//
// The manifest store reports other processes' changes only: a write through any handle of this
// process is never an external change. So a `DiskCache` posts each of its own writes here, after
// the write is in the manifest, and every `Cache` on the same directory (the one that wrote
// included) drops the keys from its memory tier. The invariant: a listener is called after the
// manifest holds the change, and never while a lock of the cache or of the manifest is held.

/// What a write changed: some keys, or possibly every key.
enum CacheKeyChange: Sendable, Equatable {
    /// The entries of these keys were set or removed.
    case keys([String])
    /// Every entry may have changed (a `removeAll`).
    case all
    /// A trim of this process removed these entries: to keep a limit, or because they expired.
    case trimmed(evicted: [String], expired: [String])
}

/// The process-wide registry of listeners, by cache directory.
enum CacheChangeHub {
    /// A listener and the directory it listens to.
    private struct Listener: Sendable {
        let token: UInt64
        let directory: String
        let call: @Sendable (CacheKeyChange) -> Void
    }

    private struct Registry: Sendable {
        var nextToken: UInt64 = 0
        var listeners: [Listener] = []
    }

    private static let registry = Mutex(Registry())
    /// How many listeners there are in the process, read without the lock so that a write posts
    /// nothing, and builds no change, while no `Cache` listens (a `DiskCache` used alone).
    private static let listenerCount = Atomic<Int>(0)

    /// The name that identifies `directory` for the hub: its real path, or the path as given when
    /// it cannot be resolved.
    static func canonical(_ directory: String) -> String {
        guard let resolved = realpath(directory, nil) else { return directory }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Adds a listener for writes to `directory` (a canonical name); returns its token.
    static func listen(to directory: String, _ call: @escaping @Sendable (CacheKeyChange) -> Void) -> UInt64 {
        registry.withLock { registry in
            registry.nextToken += 1
            registry.listeners.append(Listener(token: registry.nextToken, directory: directory, call: call))
            listenerCount.store(registry.listeners.count, ordering: .releasing)
            return registry.nextToken
        }
    }

    /// Removes the listener with `token`.
    static func stopListening(_ token: UInt64) {
        registry.withLock { registry in
            registry.listeners.removeAll { $0.token == token }
            listenerCount.store(registry.listeners.count, ordering: .releasing)
        }
    }

    /// Tells every listener of `directory` but the one with token `excluded` about `change`,
    /// outside the registry's lock.
    static func post(
        _ change: @autoclosure () -> CacheKeyChange, in directory: String, excluding excluded: UInt64? = nil
    ) {
        guard listenerCount.load(ordering: .acquiring) > 0 else { return }
        let change = change()
        let calls = registry.withLock { registry in
            registry.listeners.filter { $0.directory == directory && $0.token != excluded }.map(\.call)
        }
        for call in calls { call(change) }
    }
}
