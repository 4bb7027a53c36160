import Dispatch
import Foundation
import Logging
import MappedKV

/// A memory cache over a disk cache: reads look in memory first, then on disk, and a disk hit is
/// decoded once and kept in memory; writes go to both.
///
/// Values are turned into bytes by an injected ``CacheSerializer`` (JSON for `Codable` values by
/// default; ``BytesCacheSerializer`` and ``DataCacheSerializer`` store bytes as they are). The
/// disk side is shared with every process that opens the directory; the memory side is this
/// process's own and stays true to the disk side:
///
/// - **Coherence.** A set, removal, `removeAll` or trim by another process (or by another cache of
///   this process on the same directory) drops the keys it changed from this memory tier. A get
///   first looks whether the shared manifest moved since this process last looked (three loads,
///   no system call) and catches up if it did, so no get that begins after another process's
///   write has returned is served the older value from memory. A change that rewrites the manifest
///   as a whole (another process's `removeAll`, a compaction of the manifest) empties the memory tier.
/// - **Lifetimes.** A disk hit enters memory with the disk entry's remaining time to live, and a
///   set without a time to live takes ``DiskCacheConfiguration/defaultTimeToLive``.
///
/// The synchronous methods do their file I/O on the calling thread; the `async` ones run it on a
/// dispatch queue of their own, so they never block Swift's cooperative thread pool.
///
/// ```swift
/// struct Profile: Codable, Sendable { var name: String }
/// let cache = try Cache<Profile>(
///     directory: "/tmp/profiles", memoryLimits: MemoryCacheLimits(count: 500),
///     diskConfiguration: DiskCacheConfiguration(limits: DiskCacheLimits(count: 10_000)))
/// try cache.set(Profile(name: "Ada"), forKey: "user-1")
/// let profile = try cache.value(forKey: "user-1")
/// ```
public final class Cache<Value: Sendable>: Sendable {
    /// The memory side (this process only).
    public let memory: MemoryCache<String, Value>
    /// The disk side (shared by every process that opens the directory).
    public let disk: DiskCache
    /// How values become bytes.
    public let serializer: any CacheSerializer<Value>
    let queue = DispatchQueue(label: "MappedKVCache.Cache.io", attributes: .concurrent)
    /// Bumped for every key dropped from memory, so that a fill racing a drop drops what it kept.
    let invalidations = InvalidationCounters()
    /// The disk side's manifest, held here as well so that the check on every memory hit borrows
    /// it from `self` (reached through ``disk``, it was retained and released on every hit).
    @usableFromInline let manifest: MappedKV
    /// Who hears this cache's events.
    let observers = CacheObservers()
    /// The subscription to other processes' changes of the manifest.
    let externalChanges: ExternalChangeObservation
    /// This cache's listener token in the process-wide ``CacheChangeHub``.
    let hubToken: UInt64
    /// The disk side's metrics, through which this cache reports its memory tier; nil reports nothing.
    @usableFromInline let metrics: CacheMetrics?

    /// Opens the disk side in `directory` and creates an empty memory side.
    ///
    /// - Parameters:
    ///   - directory: the disk cache's directory, created if missing.
    ///   - memoryLimits: the memory side's limits; a value's cost is its serialized size unless a
    ///     set gives one.
    ///   - diskConfiguration: the disk side's limits, inline threshold, key, trim interval and
    ///     default time to live.
    ///   - serializer: how values become bytes.
    ///   - memoryClock: the memory side's clock (see ``MemoryCache``); tests inject one.
    ///   - logger: where the disk side logs; nil logs nothing.
    ///
    /// With ``DiskCacheConfiguration/metrics`` set, the memory tier's hits, misses and evictions
    /// are reported under the same options as the disk side's (`tier` `memory`).
    public init(
        directory: String, memoryLimits: MemoryCacheLimits = MemoryCacheLimits(count: 1_000),
        diskConfiguration: DiskCacheConfiguration = DiskCacheConfiguration(),
        serializer: some CacheSerializer<Value>, memoryClock: MemoryCacheClock = .coarse, logger: Logger? = nil
    ) throws(CacheError) {
        let observers = self.observers
        let disk = try DiskCache(directory: directory, configuration: diskConfiguration, logger: logger)
        let metrics = disk.metrics
        self.memory = MemoryCache(limits: memoryLimits, clock: memoryClock) { key, _, reason in
            metrics?.countEviction(reason)
            observers.tell(CacheEvent(reason == .expired ? .didExpire : .didEvict, key: key, tier: .memory))
        }
        self.metrics = metrics
        self.disk = disk
        self.manifest = disk.manifest
        self.serializer = serializer
        let coherence = MemoryCoherence(memory: memory, invalidations: invalidations, observers: observers, disk: disk)
        self.externalChanges = disk.manifest.observeExternalChanges { change in coherence.apply(change) }
        self.hubToken = CacheChangeHub.listen(to: disk.hubDirectory) { change in coherence.apply(change) }
    }

    deinit {
        CacheChangeHub.stopListening(hubToken)
        externalChanges.cancel()
    }

    /// The value of `key`: from memory, else from disk (then kept in memory for the entry's
    /// remaining lifetime), else nil.
    ///
    /// - Throws: ``CacheError`` from the disk side, or the serializer's error when the stored
    ///   bytes do not decode as a `Value` (the entry is then removed).
    @inlinable
    public func value(forKey key: String) throws -> Value? {
        // Inlinable, so that a caller that knows `Value` runs the memory tier's lookup specialized
        // (the cache bench's cache_memory_get against cache_tier_get); the
        // catch-up and the disk read are calls.
        try catchUp()
        if let value = memory.value(forKey: key) {
            metrics?.countMemoryHit()
            return value
        }
        guard let fill = try fillFromDisk(forKey: key) else { return nil }
        return keep(fill, forKey: key)
    }

    /// Keeps a value read from disk in memory (unless it expired meanwhile) and returns it.
    /// Inlinable so that it runs in the caller's specialization: unspecialized, the memory side's
    /// set looks up generic metadata at every step.
    @inlinable
    func keep(_ fill: DiskFill<Value>, forKey key: String) -> Value {
        if fill.keeps {
            memory.set(fill.value, forKey: key, cost: fill.cost, timeToLive: fill.timeToLive)
            dropIfRaced(key, since: fill.counter)
        }
        return fill.value
    }

    /// Catches up with other processes' changes to the manifest if it moved, so that every change
    /// made before this call has been applied to the memory tier.
    /// Inlinable, so that a memory hit makes one call for the check instead of two (the cache
    /// bench's cache_memory_get).
    @inlinable
    func catchUp() throws(CacheError) {
        // A do/catch rather than `manifestCall`: its closure context retained and released the
        // disk side on every memory hit.
        do { try manifest.synchronizeChangesIfMoved() } catch { throw .store(error) }
    }

    /// The disk side's value of `key`, decoded, with how to keep it in memory, or nil on a miss.
    /// The caller keeps it, then calls ``dropIfRaced(_:since:)`` with ``DiskFill/counter``.
    @usableFromInline
    func fillFromDisk(forKey key: String) throws -> DiskFill<Value>? {
        metrics?.countMemory(hits: 0, misses: 1)  // a get calls this after a miss in memory
        let counter = invalidations.value(for: key)
        guard let found = try disk.lookUp(key, withExtendedData: false) else { return nil }
        let value = try decodeOrRemove(found.value, forKey: key)
        let lifetime = memoryLifetime(expiry: found.expiry)
        return DiskFill(
            value: value, cost: found.value.count, keeps: lifetime != nil, timeToLive: lifetime ?? nil,
            counter: counter)
    }

    /// Drops `key` from memory if a drop of it may have run since its counter read `counter`: the
    /// value just kept may be older than what another process wrote (see ``InvalidationCounters``).
    @inlinable
    func dropIfRaced(_ key: String, since counter: UInt64) {
        if invalidationMoved(key, since: counter) { memory.removeValue(forKey: key) }
    }

    /// Whether the invalidation counter of `key` moved since it read `counter`.
    @usableFromInline
    func invalidationMoved(_ key: String, since counter: UInt64) -> Bool {
        invalidations.value(for: key) != counter
    }

    /// `bytes` decoded as a `Value`; bytes that do not decode are removed from the cache and
    /// the serializer's error is thrown.
    func decodeOrRemove(_ bytes: [UInt8], forKey key: String) throws -> Value {
        do {
            return try serializer.decode(bytes)
        } catch {
            try disk.removeValue(forKey: key)
            throw error
        }
    }

    /// Keeps `value` in memory until the disk entry's `expiry` (milliseconds since 1970 on the
    /// disk side's clock), or not at all if that has passed.
    func keep(_ value: Value, forKey key: String, cost: Int, expiry: UInt64?) {
        guard let timeToLive = memoryLifetime(expiry: expiry) else { return }
        memory.set(value, forKey: key, cost: cost, timeToLive: timeToLive)
    }

    /// The time to live in memory of a disk entry that expires at `expiry` (nil inside: never);
    /// nil if it has expired.
    func memoryLifetime(expiry: UInt64?) -> Duration?? {
        guard let expiry else { return .some(nil) }
        let now = disk.clock.now()
        guard expiry > now else { return nil }
        return expiry - now > UInt64(Int64.max / 1_000_000) ? .some(nil) : .milliseconds(Int64(expiry - now))
    }

    /// Stores `value` under `key` in memory and on disk.
    ///
    /// - Parameters:
    ///   - value: the value to store.
    ///   - key: the entry's key.
    ///   - cost: what the entry counts against the memory side's cost limit; nil (the default)
    ///     counts its serialized size.
    ///   - timeToLive: after this long the entry is a miss on both sides; nil takes
    ///     ``DiskCacheConfiguration/defaultTimeToLive`` (by default: never expires).
    ///   - extendedData: bytes kept with the entry on disk, returned by ``entry(forKey:)``.
    @inlinable
    public func set(
        _ value: Value, forKey key: String, cost: Int? = nil, timeToLive: Duration? = nil,
        extendedData: [UInt8]? = nil
    ) throws {
        // Inlinable, so that the memory side's set runs specialized for the caller's `Value`, as
        // in ``value(forKey:)``; the disk side's set is a call.
        let stored = try setOnDisk(value, forKey: key, timeToLive: timeToLive, extendedData: extendedData)
        memory.set(value, forKey: key, cost: cost ?? stored.size, timeToLive: stored.timeToLive)
        dropIfRaced(key, since: stored.counter)
        didAdd(key)
    }

    /// The disk half of ``set(_:forKey:cost:timeToLive:extendedData:)``: encodes and stores
    /// `value`, and returns its size, its time to live and the key's counter as of its record.
    @usableFromInline
    func setOnDisk(
        _ value: Value, forKey key: String, timeToLive: Duration?, extendedData: [UInt8]?
    ) throws -> (size: Int, timeToLive: Duration?, counter: UInt64) {
        let bytes = try serializer.encode(value)
        let timeToLive = timeToLive ?? disk.configuration.defaultTimeToLive
        observers.tell(CacheEvent(.willAdd, key: key, tier: .both))
        // The key's counter is bumped while the record is the newest one: a fill, or a set of
        // this process, that read the counter before then drops what it keeps (they may hold
        // older bytes), and this set drops its own value if a later record's bump came after.
        var recorded: UInt64 = 0
        let invalidations = self.invalidations
        try disk.set(
            bytes, forKey: key, timeToLive: timeToLive, extendedData: extendedData,
            whileRecorded: { recorded = invalidations.bump(key) }, excluding: hubToken)
        return (bytes.count, timeToLive, recorded)
    }

    /// Tells the observers that a set of `key` finished.
    @usableFromInline
    func didAdd(_ key: String) {
        observers.tell(CacheEvent(.didAdd, key: key, tier: .both))
    }

    /// Removes `key` from both sides.
    public func removeValue(forKey key: String) throws(CacheError) {
        observers.tell(CacheEvent(.willRemove, key: key, tier: .both))
        try disk.removeValue(forKey: key)  // which drops the key from every memory tier of this process
        observers.tell(CacheEvent(.didRemove, key: key, tier: .both))
    }

    /// Removes everything from both sides.
    public func removeAll() throws(CacheError) {
        observers.tell(CacheEvent(.willRemoveAll, key: nil, tier: .both))
        try disk.removeAll()  // which empties every memory tier of this process on the directory
        observers.tell(CacheEvent(.didRemoveAll, key: nil, tier: .both))
    }

    /// Whether `key` is in memory or on disk.
    public func contains(_ key: String) throws(CacheError) -> Bool {
        try catchUp()
        if memory.contains(key) { return true }
        return try disk.contains(key)
    }

    /// The entry of `key` as the disk side holds it, decoded, with its metadata and extended
    /// data; nil on a miss. The value is also kept in memory.
    public func entry(forKey key: String) throws -> CacheEntry<Value>? {
        let before = invalidations.value(for: key)
        guard let found = try disk.lookUp(key, withExtendedData: true) else { return nil }
        let value = try decodeOrRemove(found.value, forKey: key)
        keep(value, forKey: key, cost: found.value.count, expiry: found.expiry)
        if invalidations.value(for: key) != before { memory.removeValue(forKey: key) }
        return CacheEntry(
            key: key, value: value, modified: found.modified, expiry: found.expiry, extendedData: found.extendedData)
    }

    /// Makes every entry set so far durable on the disk side (``DiskCache/sync()``): a power loss
    /// after this returns loses none of them.
    public func sync() throws(CacheError) { try disk.sync() }

    /// Closes the disk side (a durability point, as ``sync()``) and stops following other
    /// processes' changes; the memory side is released with the cache.
    public func close() {
        CacheChangeHub.stopListening(hubToken)
        externalChanges.cancel()
        disk.close()
    }
}

/// An entry of a ``Cache``, decoded, with what the disk side records of it.
public struct CacheEntry<Value: Sendable>: Sendable {
    /// The entry's key.
    public var key: String
    /// The decoded value.
    public var value: Value
    /// When it was set, in milliseconds since 1970.
    public var modified: UInt64
    /// When it expires, in milliseconds since 1970, or nil.
    public var expiry: UInt64?
    /// The extended data set with it, if any.
    public var extendedData: [UInt8]?
}

/// A value read from a ``Cache``'s disk side, with how to keep it in memory: its cost, its
/// remaining time to live (nil: none), whether to keep it at all (not if it expired meanwhile),
/// and the key's invalidation counter read before the disk was.
@usableFromInline
struct DiskFill<Value: Sendable>: Sendable {
    @usableFromInline let value: Value
    @usableFromInline let cost: Int
    @usableFromInline let keeps: Bool
    @usableFromInline let timeToLive: Duration?
    @usableFromInline let counter: UInt64
}
