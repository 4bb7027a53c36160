import Foundation
import Testing

@testable import MappedKVCache

/// The cache's durability point (docs/FORMAT.md 10.3): what `sync()` flushes.
@Suite struct DiskCacheSyncTests {
    @Test("the names to flush stop at the limit, and then every file is flushed instead")
    func unsyncedFilesOverflow() {
        var pending = DiskCache.UnsyncedFiles()
        for index in 0..<DiskCache.UnsyncedFiles.limit { pending.append("f\(index)") }
        #expect(!pending.overflowed && pending.names.count == DiskCache.UnsyncedFiles.limit)
        pending.append("one-too-many")
        #expect(pending.overflowed && pending.names.isEmpty)
        pending.append("after")
        #expect(pending.names.isEmpty)
    }

    @Test("sync() flushes the value files set since the last one and forgets them; values stay readable")
    func syncForgetsFlushedFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("disk-sync-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try DiskCache(directory: directory, configuration: DiskCacheConfiguration(inlineThreshold: 8))
        try cache.set([UInt8](repeating: 7, count: 100), forKey: "file")
        try cache.set([1], forKey: "inline")
        #expect(cache.unsyncedFiles.withLock { $0.names.count } == 1)
        try cache.sync()
        #expect(cache.unsyncedFiles.withLock { $0.names.isEmpty && !$0.overflowed })
        #expect(try cache.value(forKey: "file") == [UInt8](repeating: 7, count: 100))
        cache.close()
        let reopened = try DiskCache(directory: directory, configuration: DiskCacheConfiguration(inlineThreshold: 8))
        #expect(try reopened.value(forKey: "inline") == [1])
        reopened.close()
    }
}
