// The settings of a `MappedKVPersistDriver`: which store in the directory it opens and which
// namespace of it, how that store is locked and encrypted, what it reports, and how often expired
// entries are tidied away.
//
// Invariants: every process that shares one directory must open it with the same `storeID`,
// `processLock` and `cryptKey`; the store refuses an open whose lock differs
// (`MappedKVError.modeConflict`) or whose key is wrong (`MappedKVError.wrongCryptKey`). A namespace
// is stored as a key prefix `namespace:`, and a namespace may not hold a colon, so no namespace's
// prefix starts another's: two namespaces never share a key.

import MappedKV

/// The core store's configuration, named apart from the driver's own ``MappedKVPersistDriver/Configuration``.
typealias StoreConfiguration = Configuration

extension MappedKVPersistDriver {
    /// How a ``MappedKVPersistDriver`` opens its store and tidies it.
    public struct Configuration: Sendable {
        /// The ID of the store in the directory (its file names); `"hummingbird-persist"` by default.
        public var storeID: String
        /// How often ``MappedKVPersistDriver/run()`` tries to tidy expired entries away; 10 minutes
        /// by default, as Hummingbird's memory driver. Of all the processes on the store, one
        /// tidies at a time, and not again until this long after the last tidy ended. Expired
        /// entries are never returned in between: tidying only frees their space.
        public var tidyFrequency: Duration
        /// The lock between processes. ``ProcessLock/sharedMemory`` by default, the faster one:
        /// no MMKV program opens a persist store. Every process on the directory must use the same.
        public var processLock: ProcessLock
        /// The store's encryption key, or nil (the default) for a plain store.
        public var cryptKey: CryptKey?
        /// How many entries the store should expect, to size its index once; 0 lets it grow.
        public var expectedCapacity: Int
        /// The namespace of the driver's keys, so that several apps can share one store: a driver
        /// with a namespace stores every key as `namespace:key`, reads and writes only those, and
        /// tidies only those. Nil (the default) uses keys as given and sees every key of the store,
        /// those of namespaces included. Not empty, and without a colon.
        public var namespace: String?
        /// Report the store's operations through swift-metrics under these options (see the
        /// core's `MetricsOptions`); nil (the default) reports nothing and creates no metric.
        public var metrics: MetricsOptions?
        /// The label of the logger the driver and its store log through when the driver is opened
        /// without a logger: `Logger(label:)` with the app's logging backend. Nil (the default)
        /// logs nowhere.
        public var loggerLabel: String?

        /// A configuration; every argument has the default its property describes.
        public init(
            storeID: String = "hummingbird-persist",
            tidyFrequency: Duration = .seconds(600),
            processLock: ProcessLock = .sharedMemory,
            cryptKey: CryptKey? = nil,
            expectedCapacity: Int = 0,
            namespace: String? = nil,
            metrics: MetricsOptions? = nil,
            loggerLabel: String? = nil
        ) {
            self.namespace = namespace
            self.metrics = metrics
            self.loggerLabel = loggerLabel
            self.storeID = storeID
            self.tidyFrequency = tidyFrequency
            self.processLock = processLock
            self.cryptKey = cryptKey
            self.expectedCapacity = expectedCapacity
        }

        /// The store configuration these settings open, on the system's clock.
        var storeConfiguration: StoreConfiguration { storeConfiguration(clock: .system) }

        /// The store configuration these settings open, with `clock` for the store's own times
        /// (its tidying turns).
        func storeConfiguration(clock: ExpiryClock) -> StoreConfiguration {
            StoreConfiguration(
                isMultiProcess: true,
                expectedCapacity: expectedCapacity,
                cryptKey: cryptKey,
                clock: clock,
                processLock: processLock,
                storeKind: MappedKVPersistDriver.storeKind,
                metrics: metrics)
        }

        /// What every key of the namespace starts with in the store: `namespace:`, or nothing
        /// without a namespace.
        func keyPrefix() throws -> String {
            guard let namespace else { return "" }
            guard !namespace.isEmpty else {
                throw MappedKVPersistError.invalidNamespace(namespace, reason: "it is empty; use nil for none")
            }
            // Bytes, not characters: "x:\u{301}" holds a colon byte that String.contains misses.
            guard !namespace.utf8.contains(UInt8(ascii: ":")) else {
                throw MappedKVPersistError.invalidNamespace(
                    namespace, reason: "it holds a colon, which ends a namespace in the stored keys")
            }
            guard namespace.utf8.first != 1 else {
                throw MappedKVPersistError.invalidNamespace(
                    namespace, reason: "it begins with U+0001, which marks the store's kind")
            }
            return namespace + ":"
        }
    }
}
