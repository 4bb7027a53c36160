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

/// The listeners' count of one directory, which a `DiskCache` keeps so that a write to a directory
/// no `Cache` of this process listens to posts nothing and builds no change, whatever other
/// directories have listeners. (Counted for the whole process, a `Cache` on any directory made
/// every set elsewhere build, filter and free a change, which the cache bench's disk_set shows.)
final class CacheChangeChannel: Sendable {
    /// How many listeners the directory has.
    fileprivate let listenerCount = Atomic<Int>(0)
    /// The directory's canonical name.
    let directory: String

    fileprivate init(directory: String) { self.directory = directory }

    /// Whether anything listens to the directory now, read without the registry's lock: a listener
    /// added during a write may miss that write, as it would have missed it a moment earlier.
    var hasListeners: Bool { listenerCount.load(ordering: .acquiring) > 0 }
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
        /// Every directory's channel, made on first use and kept (a process opens few directories).
        var channels: [String: CacheChangeChannel] = [:]

        mutating func channel(for directory: String) -> CacheChangeChannel {
            if let channel = channels[directory] { return channel }
            let channel = CacheChangeChannel(directory: directory)
            channels[directory] = channel
            return channel
        }

        /// Stores in `directory`'s channel how many listeners it has.
        mutating func recount(_ directory: String) {
            channel(for: directory).listenerCount.store(
                listeners.count(where: { $0.directory == directory }), ordering: .releasing)
        }
    }

    private static let registry = Mutex(Registry())

    /// The channel of `directory` (a canonical name), whose count a write checks before posting.
    static func channel(for directory: String) -> CacheChangeChannel {
        registry.withLock { $0.channel(for: directory) }
    }

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
            registry.recount(directory)
            return registry.nextToken
        }
    }

    /// Removes the listener with `token`.
    static func stopListening(_ token: UInt64) {
        registry.withLock { registry in
            guard let directory = registry.listeners.first(where: { $0.token == token })?.directory else { return }
            registry.listeners.removeAll { $0.token == token }
            registry.recount(directory)
        }
    }

    /// Tells every listener of `directory` but the one with token `excluded` about `change`,
    /// outside the registry's lock.
    static func post(
        _ change: @autoclosure () -> CacheKeyChange, in channel: CacheChangeChannel, excluding excluded: UInt64? = nil
    ) {
        guard channel.hasListeners else { return }
        let directory = channel.directory
        let calls = registry.withLock { registry in
            registry.listeners.filter { $0.directory == directory && $0.token != excluded }.map(\.call)
        }
        // Built only when someone is told: not for the writes of a `Cache` that alone listens.
        guard !calls.isEmpty else { return }
        let change = change()
        for call in calls { call(change) }
    }
}
