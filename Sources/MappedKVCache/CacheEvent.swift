// What a `Cache` tells its observers.
//
// Invariant: an event names one thing that happened to one key (or to every key, for a removal of
// everything), where it happened (memory or disk) and who did it (this process or another one).
// Events of this process's own calls are told on the calling thread, "will" before the change and
// "did" after it; events noticed from other processes, and the disk side's own trims, are told on
// a queue of the cache's own, in the order noticed.

/// Something that happened to a ``Cache``'s entries, as its observers hear it.
public struct CacheEvent: Sendable, Equatable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Sendable, Equatable, CustomStringConvertible {
        /// A value is about to be stored (memory and disk).
        case willAdd
        /// A value was stored; for another process's set, the entry was set there.
        case didAdd
        /// An entry is about to be removed by a call on this cache.
        case willRemove
        /// An entry was removed: by a call on this cache, or by another process (its removal or its
        /// trim, which cannot be told apart from here).
        case didRemove
        /// Every entry is about to be removed.
        case willRemoveAll
        /// Every entry was removed, here or in another process.
        case didRemoveAll
        /// An entry was dropped to keep a limit (count, cost or bytes, age, free space, memory pressure).
        case didEvict
        /// An entry was dropped because its time to live ran out.
        case didExpire

        /// The case's name.
        public var description: String {
            switch self {
            case .willAdd: "willAdd"
            case .didAdd: "didAdd"
            case .willRemove: "willRemove"
            case .didRemove: "didRemove"
            case .willRemoveAll: "willRemoveAll"
            case .didRemoveAll: "didRemoveAll"
            case .didEvict: "didEvict"
            case .didExpire: "didExpire"
            }
        }
    }

    /// Which side of the cache an event concerns.
    public enum Tier: Sendable, Equatable, CustomStringConvertible {
        /// This process's memory tier.
        case memory
        /// The disk side shared by every process.
        case disk
        /// Both sides (a set or removal through the cache).
        case both

        /// The case's name.
        public var description: String {
            switch self {
            case .memory: "memory"
            case .disk: "disk"
            case .both: "both"
            }
        }
    }

    /// Who made the change.
    public enum Origin: Sendable, Equatable, CustomStringConvertible {
        /// A call in this process.
        case thisProcess
        /// Another process, noticed through the shared manifest.
        case otherProcess

        /// The case's name.
        public var description: String {
            switch self {
            case .thisProcess: "thisProcess"
            case .otherProcess: "otherProcess"
            }
        }
    }

    /// What happened.
    public var kind: Kind
    /// The entry's key; nil for ``Kind/willRemoveAll`` and ``Kind/didRemoveAll``.
    public var key: String?
    /// The side concerned.
    public var tier: Tier
    /// Who made the change.
    public var origin: Origin

    /// An event.
    public init(_ kind: Kind, key: String?, tier: Tier, origin: Origin = .thisProcess) {
        self.kind = kind
        self.key = key
        self.tier = tier
        self.origin = origin
    }

    /// For example `didEvict key "a" (memory, thisProcess)`.
    public var description: String {
        let subject = key.map { "key \"\($0)\"" } ?? "all keys"
        return "\(kind) \(subject) (\(tier), \(origin))"
    }
}
