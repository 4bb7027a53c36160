import Glibc
import MappedKVCache
import MappedKVCrypto
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

/// One incarnation of a child of the `cache` stress workload: it shares one ``DiskCache`` in the
/// run's directory with the other children, and puts, gets, removes and trims random shared
/// keys until its journal holds the requested number of acknowledged operations.
///
/// The journal has no intent lines (every operation is journalled once done, as `A`, like a
/// read): with evictions by other processes nothing is owed to the cache but this, checked on
/// every get: the bytes are a whole ``CacheStressValue`` of the key that was read, and not one
/// this incarnation had itself replaced or removed since (a stale value coming back).
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
    }

    /// The ID of a disk cache's manifest store in its directory (``DiskCache``'s own).
    static let manifestID = "manifest"
    /// The folders and files of a disk cache besides its manifest, which a new run removes.
    static let cacheEntries = ["files", "tmp", "trash", "trim.lock", "manifest.lock"]

    private let settings: Settings
    private let journal: StressJournalWriter
    private var history: StressHistory
    private var random: StressRandom
    /// Per key, the operation number of this incarnation's last put or removal of it: a value
    /// this incarnation wrote before that must not be read again.
    private var floors: [String: Int] = [:]

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
        let cache: DiskCache
        do {
            cache = try DiskCache(
                directory: settings.root,
                configuration: Self.configuration(byteLimit: settings.byteLimit, cryptKey: settings.cryptKey))
        } catch {
            try fail("child \(settings.child): opening the cache failed: \(error)")
        }
        defer { cache.close() }
        do {
            while history.acknowledged < settings.operations {
                try perform(CacheStressOperation.choose(using: &random), on: cache)
            }
        } catch let error as CacheError {
            try fail("child \(settings.child), operation \(history.lastOpno + 1): cache error: \(error)")
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

    /// Performs and journals one operation.
    private func perform(_ operation: CacheStressOperation, on cache: DiskCache) throws {
        let opno = history.lastOpno + 1
        let key = CacheStressValue.randomKey(using: &random)
        switch operation {
        case .put:
            let writer = CacheStressValue.Writer(
                child: settings.child, incarnation: settings.incarnation, sequence: opno)
            let length = CacheStressValue.randomLength(
                inlineThreshold: cache.configuration.inlineThreshold, using: &random)
            try cache.set(CacheStressValue.make(key: key, writer: writer, length: length, using: &random), forKey: key)
            floors[key] = opno
        case .get:
            if let bytes = try cache.value(forKey: key), let problem = problem(in: bytes, key: key, opno: opno) {
                try record(.violation("child \(settings.child), operation \(opno): get \(key): \(problem)"))
            }
        case .remove:
            try cache.removeValue(forKey: key)
            floors[key] = opno
        case .trim:
            try cache.trim()
        }
        try record(.acknowledged(opno: opno))
    }

    /// Why `bytes`, read from `key` in operation `opno`, were not put for `key` or are stale; nil if fine.
    private func problem(in bytes: [UInt8], key: String, opno: Int) -> String? {
        switch CacheStressValue.check(bytes, expectedKey: key) {
        case .invalid(let problem):
            return problem
        case .valid(let writer):
            guard writer.child == settings.child, writer.incarnation == settings.incarnation else { return nil }
            if writer.sequence >= opno { return "the value claims to be from \(writer), which has not happened yet" }
            if let floor = floors[key], writer.sequence < floor {
                return "stale value: \(writer) was replaced or removed by this child's operation \(floor)"
            }
            return nil
        }
    }
}
