// Proves the damaged-manifest policy: by default a cache whose manifest is damaged (its meta file
// zeroed, emptied or deleted, or its data file deleted) is refused with `CacheError.store` and
// every file stays byte for byte as it was; with `.quarantineAndStartEmpty` it opens empty and
// works, the damaged manifest and the old value files sit unchanged in one
// `quarantine/<UTC time>-<random>/` folder, and the move is logged at error level; a wrong or
// missing key is never taken for damage; and opens racing on one damaged cache quarantine it once.
// (A process that has the manifest open blocks the move: MappedKVMultiProcessTests' quarantine test.)
import Foundation
import Logging
import MappedKV
import MappedKVCache
import Synchronization
import Testing

@Suite struct DiskCacheQuarantineTests {
    enum Damage: String, CaseIterable, Sendable {
        case zeroedMeta, emptiedMeta, deletedMeta, deletedData

        func apply(to dir: CacheTestDirectory) throws {
            let meta = dir.file("manifest.crc")
            switch self {
            case .zeroedMeta:
                let size = try #require(DiskFixtures.contents(meta)).count
                try DiskFixtures.write([UInt8](repeating: 0, count: size), to: meta)
            case .emptiedMeta: try DiskFixtures.write([], to: meta)
            case .deletedMeta: try FileManager.default.removeItem(atPath: meta)
            case .deletedData: try FileManager.default.removeItem(atPath: dir.file("manifest"))
            }
        }
    }

    static let fileValue = (0..<500).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) }

    func configuration(
        _ policy: DiskCacheDamagedManifestPolicy, key: CryptKey? = nil, clock: ManualClock = ManualClock()
    ) -> DiskCacheConfiguration {
        var configuration = DiskCacheConfiguration(inlineThreshold: 64, cryptKey: key, clock: clock.cacheClock)
        configuration.onDamagedManifest = policy
        return configuration
    }

    /// Writes a closed cache with an inline and a file value, then damages its manifest.
    func damagedCache(_ dir: CacheTestDirectory, _ damage: Damage, key: CryptKey? = nil) throws {
        let cache = try DiskCache(directory: dir.path, configuration: configuration(.refuse, key: key))
        try cache.set(Array("inline".utf8), forKey: "small")
        try cache.set(Self.fileValue, forKey: "large")
        cache.close()
        try damage.apply(to: dir)
    }

    func isDamage(_ error: CacheError) -> Bool {
        if case .store(.corrupted) = error { return true }
        return false
    }

    @Test(arguments: Damage.allCases)
    func byDefaultADamagedManifestIsRefusedAndNothingChanges(damage: Damage) throws {
        let dir = CacheTestDirectory("quarantine")
        try damagedCache(dir, damage)
        let before = DiskFixtures.tree(dir.path)
        for _ in 0..<2 {
            let error = #expect(throws: CacheError.self) {
                try DiskCache(directory: dir.path, configuration: configuration(.refuse))
            }
            #expect(error.map(isDamage) == true, "\(String(describing: error))")
        }
        #expect(DiskFixtures.tree(dir.path) == before)
    }

    @Test(arguments: Damage.allCases)
    func withTheOptInADamagedManifestIsQuarantinedAndTheCacheStartsEmpty(damage: Damage) throws {
        let dir = CacheTestDirectory("quarantine")
        try damagedCache(dir, damage)
        let before = DiskFixtures.tree(dir.path)
        let log = CollectedLog()
        let cache = try DiskCache(
            directory: dir.path, configuration: configuration(.quarantineAndStartEmpty), logger: log.logger)

        #expect(try cache.entries().isEmpty)
        #expect(try cache.value(forKey: "large") == nil)
        try cache.set(Self.fileValue, forKey: "again")
        #expect(try cache.value(forKey: "again") == Self.fileValue)
        #expect(try cache.verify() == [], "the quarantine folder is not an orphan")
        #expect(try cache.statistics().orphanCount == 0)

        // One folder, named by the clock's UTC time (1,700,000,000,000 ms) and 16 random hex digits,
        // holding the old files byte for byte.
        let folders = DiskFixtures.names(in: dir.file("quarantine"))
        try #require(folders.count == 1, "\(folders)")
        let folder = folders[0]
        #expect(folder.hasPrefix("20231114T221320Z-") && folder.count == 17 + 16, "\(folder)")
        let moved = DiskFixtures.tree(dir.file("quarantine/" + folder))
        let expected = before.filter { path, _ in
            path.hasPrefix("manifest") || path.hasPrefix("files") || path == "totals"
        }
        #expect(expected["totals"] != nil, "the old manifest's running counts go with it")
        #expect(Set(moved.keys) == Set(expected.keys))
        for (path, bytes) in expected where path != "manifest.lock" {
            #expect(moved[path] == bytes, "\(path) changed on its way into quarantine")
        }
        #expect(expected.keys.contains { $0.hasPrefix("files/") }, "the old value file was moved")
        let errors = log.messages(at: .error)
        #expect(errors.contains { $0.contains("quarantined") && $0.contains(folder) }, "\(errors)")
        cache.close()

        let reopened = try DiskCache(directory: dir.path, configuration: configuration(.quarantineAndStartEmpty))
        #expect(try reopened.value(forKey: "again") == Self.fileValue)
        #expect(DiskFixtures.names(in: dir.file("quarantine")) == folders, "a sound manifest is not moved")
    }

    @Test func aWrongOrMissingKeyIsNeverTakenForDamage() throws {
        let dir = CacheTestDirectory("quarantine")
        let key = try #require(CryptKey(Array("right".utf8)))
        let wrong = try #require(CryptKey(Array("wrong".utf8)))
        let cache = try DiskCache(directory: dir.path, configuration: configuration(.refuse, key: key))
        for index in 0..<20 { try cache.set(Array("value \(index)".utf8), forKey: "key-\(index)") }
        try cache.set(Self.fileValue, forKey: "large")
        cache.close()
        let before = DiskFixtures.tree(dir.path)
        for attempt in [wrong, nil] {
            let error = #expect(throws: CacheError.self) {
                try DiskCache(directory: dir.path, configuration: configuration(.quarantineAndStartEmpty, key: attempt))
            }
            #expect(error?.isStore == true, "\(String(describing: error))")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("quarantine")))
        #expect(DiskFixtures.tree(dir.path) == before)
        let reopened = try DiskCache(directory: dir.path, configuration: configuration(.refuse, key: key))
        #expect(try reopened.value(forKey: "large") == Self.fileValue)
    }

    /// Eight races of four opens each: an open that loses the race can still hold the manifest's
    /// mode lock while its own load fails (with the shared-memory lock it loads after releasing the
    /// `flock`), which the quarantine must wait out rather than take for a process that has the
    /// manifest open.
    @Test(arguments: 0..<8) func opensRacingOnADamagedManifestQuarantineItOnce(race: Int) throws {
        let dir = CacheTestDirectory("quarantine")
        try damagedCache(dir, .zeroedMeta)
        let opened = Mutex<[DiskCache]>([])
        let failures = Mutex<[String]>([])
        let (path, configuration) = (dir.path, configuration(.quarantineAndStartEmpty))
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let cache = try DiskCache(directory: path, configuration: configuration)
                opened.withLock { $0.append(cache) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [], "race \(race)")
        #expect(DiskFixtures.names(in: dir.file("quarantine")).count == 1, "race \(race)")
        for cache in opened.withLock({ $0 }) {
            #expect(try cache.entries().isEmpty)
            cache.close()
        }
    }
}

/// The messages a logger was given, with their levels.
final class CollectedLog: Sendable {
    private let entries = Mutex<[(Logger.Level, String)]>([])

    /// A logger that records everything into this log.
    var logger: Logger {
        Logger(label: "test") { _ in Handler(log: self) }
    }

    /// The messages at `level`, with their metadata.
    func messages(at level: Logger.Level) -> [String] {
        entries.withLock { $0.filter { $0.0 == level }.map(\.1) }
    }

    struct Handler: LogHandler {
        let log: CollectedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            log.entries.withLock { $0.append((event.level, "\(event.message) \(all)")) }
        }
    }
}
