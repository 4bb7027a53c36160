import Glibc
import MappedKV
import MappedKVCache
import MappedKVIO

/// One operation of a `cache` stress child.
enum CacheStressOperation: Sendable {
    /// Put a fresh ``CacheStressValue`` under a random shared key.
    case put
    /// Get a random shared key and check what comes back.
    case get
    /// Remove a random shared key.
    case remove
    /// Trim the cache to its limits.
    case trim

    /// The next operation: 40% put, 45% get, 10% removal, 5% trim.
    static func choose(using random: inout some RandomNumberGenerator) -> CacheStressOperation {
        switch Int.random(in: 0..<100, using: &random) {
        case ..<40: .put
        case ..<85: .get
        case ..<95: .remove
        default: .trim
        }
    }
}

/// One incarnation of a child of the `cache` stress workload: it opens the run's directory as a
/// ``Cache`` of bytes (its own memory tier over the disk cache the children share) or, with
/// `--disk-only`, as the ``DiskCache`` alone, and puts, gets, removes and trims random shared
/// keys until its journal holds the requested number of acknowledged operations.
///
/// Every put and removal is journalled as an intent `I` with the ``StressClock`` time taken
/// before it, and acknowledged by `A` with the time taken right after the call returned; every get
/// by one `G` line with the times taken right before and right after it and what it returned. A
/// write in flight at a kill is resolved by the next incarnation as `U` (it may or may not have
/// happened). From these lines ``CacheStressTimeline`` checks after the run that no get was
/// stale. The child itself checks, on every get, that the bytes are a whole
/// ``CacheStressValue`` of the key that was read, and not one this incarnation had itself
/// replaced or removed since.
final class CacheStressWorker {
    /// What the child was asked to do.
    struct Settings: Sendable {
        /// The run's directory, which is the cache's.
        var root: String
        /// This child's index.
        var child: Int
        /// How many acknowledged operations the child must reach, over all its incarnations.
        var operations: Int
        /// The run's seed.
        var seed: UInt64
        /// How many times this child was restarted before this incarnation.
        var incarnation: Int
        /// The cache's key, or nil for a plain cache.
        var cryptKey: CryptKey?
        /// The cache's byte limit, which its trims apply; nil for none.
        var byteLimit: Int?
        /// Whether to use the disk cache alone, without a memory tier.
        var diskOnly = false
    }

    /// The ID of a disk cache's manifest store in its directory (``DiskCache``'s own).
    static let manifestID = "manifest"
    /// The folders and files of a disk cache besides its manifest, which a new run removes.
    static let cacheEntries = ["files", "tmp", "trash", "trim.lock", "manifest.lock", "totals"]

    private let settings: Settings
    private let journal: StressJournalWriter
    private var history: StressHistory
    private var random: StressRandom
    /// Per key, the operation number of this incarnation's last put or removal of it: a value
    /// this incarnation wrote before that must not be read again.
    private var floors: [String: Int] = [:]
    /// The number of the operation being performed.
    private var current = 0

    /// Opens the child's journal (cutting off a torn last line) and replays it.
    init(settings: Settings) throws {
        self.settings = settings
        let path = StressJournal.path(root: settings.root, child: settings.child)
        journal = try StressJournalWriter(path: path)
        history = try StressHistory.load(child: settings.child, path: path)
        random = StressRandom(seed: settings.seed, child: settings.child, incarnation: settings.incarnation)
    }

    /// The cache's configuration in a run with `byteLimit` and `cryptKey`: the children's and the verifier's.
    static func configuration(byteLimit: Int?, cryptKey: CryptKey?) -> DiskCacheConfiguration {
        DiskCacheConfiguration(limits: DiskCacheLimits(bytes: byteLimit), cryptKey: cryptKey)
    }

    /// Runs the incarnation: waits at the barrier on `barrier` if given, opens the cache and works.
    ///
    /// - Throws: ``StressChildFailure`` after a cache error (journalled as a violation), or a
    ///   ``SystemError`` if the journal cannot be written.
    func run(barrier: Int32?) throws {
        if let barrier { try StartBarrier.wait(on: barrier) }
        try record(.start(incarnation: settings.incarnation, pid: getpid()))
        // The write a killed incarnation left in flight may or may not have happened.
        if let pending = history.pending { try record(.unresolved(opno: pending.opno)) }
        let cache: CacheStressTarget
        do {
            cache = try CacheStressTarget(
                directory: settings.root,
                configuration: Self.configuration(byteLimit: settings.byteLimit, cryptKey: settings.cryptKey),
                diskOnly: settings.diskOnly)
        } catch {
            try fail("child \(settings.child): opening the cache failed: \(error)")
        }
        defer { cache.close() }
        do {
            while history.acknowledged < settings.operations {
                try perform(CacheStressOperation.choose(using: &random), on: cache)
            }
        } catch let error as CacheError {
            try fail("child \(settings.child), operation \(current): cache error: \(error)")
        }
        try record(.done)
    }

    /// Journals `message` as a violation and throws it.
    private func fail(_ message: String) throws -> Never {
        try record(.violation(message))
        throw StressChildFailure(message: message)
    }

    /// Writes `entry` to the journal and applies it to the model.
    private func record(_ entry: StressJournalEntry) throws(SystemError) {
        try journal.append(entry)
        history.apply(entry)
    }

    /// Performs and journals one operation. The clock is read right before and right after each
    /// cache call, with nothing else in between.
    private func perform(_ operation: CacheStressOperation, on cache: CacheStressTarget) throws {
        let opno = history.lastOpno + 1
        current = opno
        let key = CacheStressValue.randomKey(using: &random)
        switch operation {
        case .put:
            let writer = CacheStressValue.Writer(
                child: settings.child, incarnation: settings.incarnation, sequence: opno)
            let length = CacheStressValue.randomLength(
                inlineThreshold: cache.disk.configuration.inlineThreshold, using: &random)
            let value = CacheStressValue.make(key: key, writer: writer, length: length, using: &random)
            try record(.intent(opno: opno, .cachePut(key: key, begin: StressClock.now())))
            try cache.set(value, forKey: key)
            let end = StressClock.now()
            floors[key] = opno
            try record(.acknowledged(opno: opno, time: end))
        case .get:
            let begin = StressClock.now()
            let bytes = try cache.value(forKey: key)
            let end = StressClock.now()
            var result = CacheStressRead.Result.miss
            if let bytes {
                switch CacheStressValue.check(bytes, expectedKey: key) {
                case .invalid(let problem):
                    result = .invalid
                    try record(.violation("child \(settings.child), operation \(opno): get \(key): \(problem)"))
                case .valid(let writer):
                    result = .value(writer)
                    if let problem = problem(with: writer, key: key, opno: opno) {
                        try record(.violation("child \(settings.child), operation \(opno): get \(key): \(problem)"))
                    }
                }
            }
            try record(.read(CacheStressRead(opno: opno, key: key, begin: begin, end: end, result: result)))
        case .remove:
            try record(.intent(opno: opno, .cacheRemove(key: key, begin: StressClock.now())))
            try cache.removeValue(forKey: key)
            let end = StressClock.now()
            floors[key] = opno
            try record(.acknowledged(opno: opno, time: end))
        case .trim:
            try cache.trim()
            try record(.acknowledged(opno: opno))
        }
    }

    /// Why the value of `writer`, read from `key` in operation `opno`, cannot be what this
    /// incarnation reads now; nil if it can.
    private func problem(with writer: CacheStressValue.Writer, key: String, opno: Int) -> String? {
        guard writer.child == settings.child, writer.incarnation == settings.incarnation else { return nil }
        if writer.sequence >= opno { return "the value claims to be from \(writer), which has not happened yet" }
        if let floor = floors[key], writer.sequence < floor {
            return "stale value: \(writer) was replaced or removed by this child's operation \(floor)"
        }
        return nil
    }
}
