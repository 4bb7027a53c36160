import Foundation
import MappedKV
import MappedKVCache
import MappedKVProcessTestSupport
import Testing

// A damaged cache manifest is not moved aside while another process has it open: a `mappedkv hold`
// child keeps the manifest open (as a cache process would, multi-process with the shared-memory
// lock); an open with `.quarantineAndStartEmpty` then throws and changes no file; once the child
// has exited, the same open quarantines the manifest and starts empty.

@Suite("Cache quarantine across processes", .serialized, .timeLimit(.minutes(3)))
struct CacheQuarantineProcessTests {
    /// Every file under `root` with its bytes (nil for folders), except the shared-memory lock
    /// file, whose bytes are lock state that every open changes.
    func snapshot(_ root: String) throws -> [String: Data?] {
        try DirectorySnapshot(root).entries.filter { $0.key != "manifest.lock" }
    }

    @Test("while another process has a damaged manifest open, it is refused and nothing moves")
    func notWhileAnotherProcessHasItOpen() throws {
        try TemporaryDirectory.with { tmp in
            let dir = tmp.path("cache")
            var configuration = DiskCacheConfiguration(inlineThreshold: 64)
            let healthy = try DiskCache(directory: dir, configuration: configuration)
            try healthy.set([UInt8](repeating: 7, count: 500), forKey: "large")
            try healthy.set([1, 2, 3], forKey: "small")
            healthy.close()

            let holder = try HeldStore(CLI.store(dir, "manifest") + ["--multi-process", "--lock", "shared-memory"])
            let meta = dir + "/manifest.crc"
            let size = try Data(contentsOf: URL(fileURLWithPath: meta)).count
            try Data(count: size).write(to: URL(fileURLWithPath: meta))  // zeroed: the meta is lost
            let damaged = try snapshot(dir)

            configuration.onDamagedManifest = .quarantineAndStartEmpty
            let error = #expect(throws: CacheError.self) {
                try DiskCache(directory: dir, configuration: configuration)
            }
            guard case .store(.corrupted)? = error else {
                Issue.record("expected damage, got \(String(describing: error))")
                return
            }
            // The attempt waited on `trim.lock`, which any trim creates empty; nothing else may change.
            let after = try snapshot(dir).filter { $0.key != "trim.lock" }
            let changed = Set(after.keys).union(damaged.keys).filter { after[$0] != damaged[$0] }.sorted()
            #expect(changed == [], "nothing moved or changed while the manifest was open elsewhere")
            #expect(!FileManager.default.fileExists(atPath: dir + "/quarantine"))
            // The holder reads the keys as it exits, finds the damage too, and exits 4 (damaged).
            #expect(holder.release() == 4)

            let cache = try DiskCache(directory: dir, configuration: configuration)
            defer { cache.close() }
            #expect(try cache.entries().isEmpty)
            let folders = try FileManager.default.contentsOfDirectory(atPath: dir + "/quarantine")
            try #require(folders.count == 1, "\(folders)")
            let moved = try Data(contentsOf: URL(fileURLWithPath: dir + "/quarantine/" + folders[0] + "/manifest.crc"))
            #expect(moved == Data(count: size))
        }
    }
}
