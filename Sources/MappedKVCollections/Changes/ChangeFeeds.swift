import Synchronization

// The change streams open on one collection store in this process, which this process's own
// writes are pushed to (other processes' writes reach each stream through its store subscription).
// The invariants: a write pushes its changes inside the store's exclusive section, after the store
// write, so every stream of the bucket receives this process's changes in the order the store
// received them; a feed is held weakly, so a stream nobody reads any more is released (and leaves
// the hub from its teardown); and a write with no stream open pays one relaxed atomic load.

/// The open change feeds of one collection store in this process.
final class ChangeFeeds: Sendable {
    private final class WeakBox: @unchecked Sendable {
        // Written once, at init; a weak reference is read atomically by the runtime.
        weak var value: BucketChangeFeed?
        init(_ value: BucketChangeFeed) { self.value = value }
    }

    private struct Registry {
        var next: UInt64 = 0
        var feeds: [UInt64: WeakBox] = [:]
    }

    /// How many feeds are registered: read without the lock by every write.
    private let active = Atomic<Int>(0)
    private let registry = Mutex(Registry())

    init() {}

    /// Whether no stream is open: a write then pushes nothing.
    @inline(__always)
    var isEmpty: Bool { active.load(ordering: .relaxed) == 0 }

    /// Registers `feed`; returns the token that removes it.
    func add(_ feed: BucketChangeFeed) -> UInt64 {
        registry.withLock { registry in
            registry.next += 1
            registry.feeds[registry.next] = WeakBox(feed)
            active.store(registry.feeds.count, ordering: .relaxed)
            return registry.next
        }
    }

    /// Removes the feed registered with `token`; removing it twice is harmless.
    func remove(_ token: UInt64) {
        registry.withLock { registry in
            registry.feeds[token] = nil
            active.store(registry.feeds.count, ordering: .relaxed)
        }
    }

    /// The live feeds watching `bucket`.
    func feeds(of bucket: ExactString) -> [BucketChangeFeed] {
        registry.withLock { registry in registry.feeds.values.compactMap { $0.value }.filter { $0.bucket == bucket } }
    }

    /// Pushes the changes `make` returns to every feed of `bucket`; `make` runs only if one exists.
    func publish(bucket: String, _ make: () -> [BucketChange]) {
        guard !isEmpty else { return }
        let feeds = feeds(of: ExactString(bucket))
        guard !feeds.isEmpty else { return }
        let changes = make()
        for feed in feeds { feed.push(changes) }
    }
}
