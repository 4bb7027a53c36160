import MappedKVCrypto
import MappedKVFormat

// The parts of ``StoreCore``'s state, each a value that one concern reads and writes: the loaded
// region (reads, appends, write-backs), what this instance knows of the files' states (catching
// up, durability, the index file), reading through the mappings, the open-to-closed lifecycle,
// and what the last load found. A load's result replaces a part whole, never field by field.
extension StoreCore {
    /// The data region as this instance holds it: its plain text, the index of its live keys, and
    /// the meta they agree with.
    ///
    /// The invariant: ``mirror`` is the plain text of exactly the bytes the meta's size covers
    /// (empty while reading through the mappings), and ``index`` holds the last record of every
    /// live key in it (while reading through the mappings, of the records written since the
    /// index file's state).
    struct LoadedRegion {
        /// The meta as this instance last wrote or verified it.
        var meta = MetaInfo()
        /// The data file's header as loaded.
        var header: UInt32 = 0
        /// The plaintext data region, `[0, actualSize)`.
        var mirror: [UInt8] = []
        /// The live keys, as slots in ``mirror``.
        var index = KeyIndex()
        /// Records decoded at load or appended since, deletions included (for statistics).
        var recordCount = 0
        /// Whether every value carries MMKV's 4-byte expiry suffix (meta flag bit 0).
        var expiryEnabled = false
        /// The cipher stream positioned at the end of the region, for an encrypted store.
        var cipher: CFBStream?

        /// An empty region: a closed store's, or one whose memory was released.
        init() {}

        /// The region a load decoded.
        init(_ sound: SoundRegion) {
            meta = sound.meta
            header = sound.header
            mirror = sound.plain
            index = sound.index
            recordCount = sound.recordCount
            expiryEnabled = sound.expiryEnabled
            cipher = sound.cipher
        }

        /// The region of a store that reads through its mappings: no mirror, and an index of
        /// the records written after the index file's state.
        init(_ open: MappedOpen) {
            meta = open.meta
            header = open.dataHeader
            index = open.overlay
            recordCount = open.recordCount
            expiryEnabled = open.expiryEnabled
        }

        /// Calls `body` with the mirror's bytes and the index to change: filing a record compares
        /// its key with the ones the index points at in the mirror. One access to the region
        /// covers both parts, where two accesses to it would overlap.
        mutating func withMirrorAndIndex<R>(_ body: (UnsafeRawBufferPointer, inout KeyIndex) -> R) -> R {
            mirror.withUnsafeBytes { body($0, &index) }
        }

        /// ``withMirrorAndIndex(_:)`` with the mirror's bytes writable, for records written in place.
        mutating func withMutableMirrorAndIndex<R>(
            _ body: (UnsafeMutableRawBufferPointer, inout KeyIndex) -> R
        ) -> R {
            mirror.withUnsafeMutableBytes { body($0, &index) }
        }
    }

    /// Which states of the files this instance has seen, flushed and indexed, and the changes by
    /// other processes it has noticed and not yet reported.
    struct ChangeTracking {
        /// The meta stamp in the file as of this instance's last load, catch-up or write. Set
        /// through ``StoreCore/observed``, which publishes it.
        var observed = MetaStamp(sequence: 0, crcDigest: 0, actualSize: 0)
        /// False while a catch-up runs: it publishes the stamp it caught up to only after it has
        /// raised the change signal, so that a read that finds the published stamp current finds
        /// the signal too.
        var publishesObserved = true
        /// Changes by other processes noticed and not yet reported.
        var pendingChanges: [ExternalChange] = []
        /// The meta stamp at this instance's last durability point (or open): a close finds
        /// nothing to flush while the stamp is still this one.
        var flushedStamp: MetaStamp?
        /// The state the index file describes, as far as this instance knows: the one it last
        /// wrote or adopted; nil when unknown.
        var indexFileStamp: MetaStamp?
        /// Set by a write-back (``StoreCore/commit(_:_:staleEnd:sync:)``): a multi-process write
        /// then writes the index file for the new state before it releases the lock.
        var rewroteRegion = false
        /// Set while a load must not use the index file (a lookup found it damaged).
        var skipsIndexFileOnce = false
    }

    /// Reading through the mapped index file and the data mapping (``MappedOpen``,
    /// StoreCore+MappedReads.swift) instead of the private mirror.
    struct MappedReads {
        /// Whether gets read through the mappings; checked first by every get.
        var isActive = false
        /// The mapped index file while active.
        var file: MappedIndexFile?
        /// The plaintext pages of an encrypted store while active.
        var pages: DecryptedPages?
        /// The live keys while active (the mapped file's, changed by the overlay's records).
        var liveCount = 0
    }

    /// Where the store is between its open and its close.
    struct Lifecycle {
        /// The open files; nil once closed.
        var files: StoreFiles?
        /// Why the store is closed, once it is.
        var closedReason: String?
        /// Whether ``StoreCore/releaseMemory()`` dropped the region; the next access reloads it.
        /// Set through ``StoreCore/isMemoryReleased``, which withdraws or publishes the stamp.
        var isMemoryReleased = false
    }

    /// What the last loads found, for the API to report.
    struct LoadFindings {
        /// What the last load that found damage did about it.
        var recovery: RecoveryReport?
        /// What the last load that found writes lost to a crash kept and lost.
        var crashLoss: CrashLossReport?
        /// How the last load got its index (the index file, or decoding the log).
        var indexOutcome = IndexedLoad.Outcome.decoded
    }
}
