// The entries one call of `MemoryCache` took out while holding its lock.
//
// Invariant: every value the cache drops leaves the lock inside a batch, so handlers run, and values
// are destroyed, only after the lock is released; a batch of one eviction does not allocate.

/// The evictions of one locked section, in the order they happened, with the handler to report them
/// to and any replaced value to destroy after the lock is released.
@usableFromInline
struct EvictionBatch<Key: Sendable, Value: Sendable>: Sendable {
    /// An evicted entry.
    @usableFromInline typealias Eviction = (key: Key, value: Value, reason: MemoryCacheEvictionReason)

    /// The first eviction, kept inline so that the common single eviction needs no array.
    @usableFromInline var first: Eviction?
    /// The evictions after the first; `nil` rather than empty, so that the common batch holds no array
    /// to release.
    @usableFromInline var rest: [Eviction]?
    /// The handler to report the evictions to.
    @usableFromInline var handler: (@Sendable (Key, Value, MemoryCacheEvictionReason) -> Void)?
    /// A value that was replaced or removed without being an eviction, destroyed with the batch.
    @usableFromInline var released: Value?

    /// Makes an empty batch.
    @inlinable
    init() {}

    /// Whether no eviction was recorded.
    @inlinable var isEmpty: Bool { first == nil }

    /// Records an eviction.
    @inlinable
    mutating func append(key: Key, value: Value, reason: MemoryCacheEvictionReason) {
        if first == nil {
            first = (key, value, reason)
        } else if rest == nil {
            rest = [(key, value, reason)]
        } else {
            rest!.append((key, value, reason))
        }
    }

    /// Reports the evictions to the handler, in order. Call it without the cache's lock held.
    @inlinable
    func deliver() {
        guard let handler, let first else { return }
        handler(first.key, first.value, first.reason)
        for eviction in rest ?? [] {
            handler(eviction.key, eviction.value, eviction.reason)
        }
    }
}
