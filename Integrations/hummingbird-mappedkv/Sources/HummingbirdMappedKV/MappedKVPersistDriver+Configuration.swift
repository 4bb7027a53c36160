// The settings of a `MappedKVPersistDriver`: which store in the directory it opens, how that store
// is locked and encrypted, and how often expired entries are tidied away.
//
// Invariant: every process that shares one directory must open it with the same `storeID`,
// `processLock` and `cryptKey`; the store refuses an open whose lock differs
// (`MappedKVError.modeConflict`) or whose key is wrong (`MappedKVError.wrongCryptKey`).

import MappedKV

/// The core store's configuration, named apart from the driver's own ``MappedKVPersistDriver/Configuration``.
typealias StoreConfiguration = Configuration

extension MappedKVPersistDriver {
    /// How a ``MappedKVPersistDriver`` opens its store and tidies it.
    public struct Configuration: Sendable {
        /// The ID of the store in the directory (its file names); `"hummingbird-persist"` by default.
        public var storeID: String
        /// How often ``MappedKVPersistDriver/run()`` removes expired entries; 10 minutes by
        /// default, as Hummingbird's memory driver. Expired entries are never returned in between:
        /// tidying only frees their space.
        public var tidyFrequency: Duration
        /// The lock between processes. ``ProcessLock/sharedMemory`` by default, the faster one:
        /// no MMKV program opens a persist store. Every process on the directory must use the same.
        public var processLock: ProcessLock
        /// The store's encryption key, or nil (the default) for a plain store.
        public var cryptKey: CryptKey?
        /// How many entries the store should expect, to size its index once; 0 lets it grow.
        public var expectedCapacity: Int

        /// A configuration; every argument has the default its property describes.
        public init(
            storeID: String = "hummingbird-persist",
            tidyFrequency: Duration = .seconds(600),
            processLock: ProcessLock = .sharedMemory,
            cryptKey: CryptKey? = nil,
            expectedCapacity: Int = 0
        ) {
            self.storeID = storeID
            self.tidyFrequency = tidyFrequency
            self.processLock = processLock
            self.cryptKey = cryptKey
            self.expectedCapacity = expectedCapacity
        }

        /// The store configuration these settings open.
        var storeConfiguration: StoreConfiguration {
            StoreConfiguration(
                isMultiProcess: true,
                expectedCapacity: expectedCapacity,
                cryptKey: cryptKey,
                processLock: processLock,
                storeKind: MappedKVPersistDriver.storeKind)
        }
    }
}
