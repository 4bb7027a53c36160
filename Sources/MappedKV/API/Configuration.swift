import Glibc
import MappedKVFormat

/// Where a store reads the current time for key expiry, in MMKV's unit: whole seconds since 1970
/// as a `UInt32` (so nothing after 2106-02-07 can be expressed; see `MappedKVFormat.ExpirySuffix`).
///
/// A value expires once ``now`` reaches its stored expiry time. A set stores the current time
/// rounded **up** to a whole second (from ``preciseNow``) plus the duration in whole seconds, also
/// rounded up, so that no value expires before its duration has passed; a whole-second duration
/// outlives its length by less than a second (docs/FORMAT.md section 5).
///
/// Tests inject a clock they advance by hand instead of sleeping.
public struct ExpiryClock: Sendable {
    /// The current time in whole seconds since 1970, rounded down: what decides whether a value
    /// has expired.
    public let now: @Sendable () -> UInt32
    /// The current time since 1970 to below a second, from which a set's expiry time is rounded up.
    public let preciseNow: @Sendable () -> Duration

    /// A clock that calls `now` for the time and takes it as exact whole seconds (for a clock a
    /// test advances by whole seconds).
    public init(_ now: @escaping @Sendable () -> UInt32) {
        self.now = now
        self.preciseNow = { .seconds(now()) }
    }

    /// A clock that reads the time to below a second; ``now`` is that time rounded down, clamped
    /// to the `UInt32` range.
    public init(preciseNow: @escaping @Sendable () -> Duration) {
        self.preciseNow = preciseNow
        self.now = { UInt32(clamping: max(0, preciseNow().components.seconds)) }
    }

    private init(now: @escaping @Sendable () -> UInt32, preciseNow: @escaping @Sendable () -> Duration) {
        self.now = now
        self.preciseNow = preciseNow
    }

    /// The system's wall clock: `time` for ``now`` (every read of an expiring key asks it) and
    /// `CLOCK_REALTIME` for ``preciseNow`` (only a set with expiry asks it). `time` never runs
    /// ahead of `CLOCK_REALTIME`, so a value never reads as expired before its time.
    public static let system = ExpiryClock(
        now: { UInt32(clamping: Int(time(nil))) },
        preciseNow: {
            var reading = timespec()
            clock_gettime(CLOCK_REALTIME, &reading)
            return .seconds(Int64(reading.tv_sec)) + .nanoseconds(Int64(reading.tv_nsec))
        })

    /// The expiry time of a value set now to live `seconds`: the current time rounded up to a
    /// whole second plus `seconds`, saturating at `UInt32.max`; 0 (never) when `seconds` is 0.
    func expiration(after seconds: UInt32) -> UInt32 {
        guard seconds != 0 else { return ExpirySuffix.never }
        return ExpirySuffix.expiration(now: roundedUpNow(), duration: seconds)
    }

    /// The current time in whole seconds since 1970, rounded up and clamped to the `UInt32` range.
    func roundedUpNow() -> UInt32 {
        let (seconds, attoseconds) = preciseNow().components
        guard seconds >= 0 else { return 0 }
        guard seconds < Int64(UInt32.max) else { return .max }
        return UInt32(seconds) + (attoseconds > 0 ? 1 : 0)
    }
}

/// How a store is opened.
public struct Configuration: Sendable {
    /// Open without writing anything; both files must exist.
    public var isReadOnly: Bool
    /// Share the store with other processes (MMKV's `MULTI_PROCESS` mode): reads and writes
    /// take `flock` on the `.crc` file and catch up with other processes' changes. A store open
    /// in single-process mode by one process cannot be opened by another in any mode.
    public var isMultiProcess: Bool
    /// The data file's minimum size in bytes, rounded up to whole pages (MMKV's `expectedCapacity`).
    public var expectedCapacity: Int
    /// The encryption key, or nil for a plain store. Nothing in the files says for certain whether
    /// a store is encrypted: opening with the wrong key fails with
    /// ``MappedKVError/wrongCryptKey(id:reason:)``, and opening without one a store whose meta
    /// file holds an IV and whose records do not load as plain text fails with
    /// ``MappedKVError/missingCryptKey(id:)`` (see ``treatsStoreAsPlain``).
    public var cryptKey: CryptKey?
    /// Take the store for a plain one even though its meta file holds an IV, so that damage found
    /// without a key goes to the ``recoveryHandler`` (the default: false).
    ///
    /// MMKV writes a random IV into the meta file of an encrypted store, and leaves it there when
    /// the store is decrypted, so an IV is a strong hint but no proof. Without a key, a store whose
    /// meta holds an IV loads as long as its records decode as plain text; if they do not (the
    /// CRC or the size disagrees, or the records do not decode), the open throws
    /// ``MappedKVError/missingCryptKey(id:)`` before any handler is consulted and before any copy
    /// is made, since a recovery would otherwise keep ciphertext bytes as plain keys and values.
    /// Set this only for a store known to be plain: a plain store with a stale IV then recovers
    /// from damage as any plain store does. It has no effect with a ``cryptKey``.
    public var treatsStoreAsPlain: Bool
    /// The clock that decides which keys have expired.
    public var clock: ExpiryClock
    /// Decides what happens when a load finds damage; nil uses ``RecoveryDecision/default(for:)``
    /// (recover from CRC and length damage after copying the files aside; fail otherwise).
    public var recoveryHandler: RecoveryHandler?
    /// Skip a set whose value equals the stored one, writing nothing (MMKV's
    /// `enableCompareBeforeSet`). The comparison is of payload bytes, made under the write lock.
    /// It does not apply while key expiry is on: a set then also renews the expiry time.
    public var comparesBeforeSet: Bool
    /// Turn key expiry on at open with this default lifetime (`.zero`: forever), as MMKV's
    /// `enableAutoKeyExpire` right after opening; nil leaves the store's setting as it is.
    /// A read-only open only takes the default lifetime, if the store has expiry on.
    public var keyExpiry: Duration?
    /// Create the store's files when neither exists (the default). When false, opening a store
    /// that does not exist fails with ``MappedKVError/storeNotFound(path:)`` and creates nothing,
    /// so a mistyped directory or ID is reported instead of starting an empty store.
    /// A read-only open never creates anything.
    public var createsIfMissing: Bool
    /// The kind of store this open expects, for a layer that encodes its own keys and values in
    /// the store (``StoreKind``): an empty store is marked with it, a store of another kind or an
    /// unmarked one with keys is refused. Nil (the default) opens plain stores only, and refuses
    /// a store marked with any kind.
    public var storeKind: StoreKind?
    /// The inter-process lock of a multi-process store: MMKV's `flock` (the default) or the faster
    /// ``ProcessLock/sharedMemory`` lock, which MMKV processes cannot share. Ignored in
    /// single-process mode, where no other process can have the store open.
    public var processLock: ProcessLock
    /// Report operations, write-backs, reloads and damage through swift-metrics under these
    /// options' label prefix (see ``MetricsOptions``); nil, the default, reports nothing and
    /// creates no metric.
    public var metrics: MetricsOptions?
    /// When writes reach the disk: at ``MappedKV/sync()`` and ``MappedKV/close()`` (the default),
    /// on every write, or also at an interval (``Durability``). Every open of a store in one
    /// process shares the first open's level.
    public var durability: Durability
    /// Keep an index file beside the store (`<data file>.index`, the default), so that an open
    /// adopts the index it holds instead of decoding the whole log, or false for a store that
    /// must be exactly its two MMKV files: then nothing reads or writes that file. The file is
    /// checked before it is used and never changes a value a read returns (docs/FORMAT.md 12);
    /// a writable open writes it after decoding the log and when it closes.
    ///
    /// A store opened single-process for writing, or multi-process with
    /// ``ProcessLock/sharedMemory``, then reads through its mappings: gets decode from the mapped
    /// data file and probe the mapped index file, so the open copies nothing and processes share
    /// one copy of both; an encrypted store decrypts each page of the region the first time a
    /// read reaches it, into memory of its own. Its first write loads a private copy, as any other
    /// store keeps. Every open of a store in one process shares the first open's choice.
    public var usesIndexFile: Bool
    /// For an encrypted store that reads through its mappings (see ``usesIndexFile``): decrypt each
    /// 4 KiB page of the region the first time a read reaches it (true, the default), so that the
    /// open decrypts nothing and a process holds the plaintext of what it reads; or false, to
    /// decrypt the whole region into a private copy at the open, as a store shared through
    /// `flock` does, for gets at that copy's speed. docs/bench/store.md compares the two.
    public var decryptsPagesOnRead = true

    /// Creates a configuration; the defaults open a plain store read-write with a one-page file,
    /// creating it if it does not exist.
    public init(
        isReadOnly: Bool = false, isMultiProcess: Bool = false, expectedCapacity: Int = 0,
        cryptKey: CryptKey? = nil, clock: ExpiryClock = .system, recoveryHandler: RecoveryHandler? = nil,
        comparesBeforeSet: Bool = false, keyExpiry: Duration? = nil, createsIfMissing: Bool = true,
        processLock: ProcessLock = .flock, storeKind: StoreKind? = nil, metrics: MetricsOptions? = nil,
        durability: Durability = .atSync, usesIndexFile: Bool = true,
        treatsStoreAsPlain: Bool = false
    ) {
        self.usesIndexFile = usesIndexFile
        self.treatsStoreAsPlain = treatsStoreAsPlain
        self.metrics = metrics
        self.durability = durability
        self.processLock = processLock
        self.storeKind = storeKind
        self.isReadOnly = isReadOnly
        self.isMultiProcess = isMultiProcess
        self.expectedCapacity = expectedCapacity
        self.cryptKey = cryptKey
        self.clock = clock
        self.recoveryHandler = recoveryHandler
        self.comparesBeforeSet = comparesBeforeSet
        self.keyExpiry = keyExpiry
        self.createsIfMissing = createsIfMissing
    }
}
