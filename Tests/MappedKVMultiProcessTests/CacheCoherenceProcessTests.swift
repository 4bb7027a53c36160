import Dispatch
import Foundation
import MappedKVCache
import MappedKVProcessTestSupport
import Synchronization
import Testing

/// A `Cache`'s memory tier learns of other processes' writes: after `mappedkv cache put`, `rm` or
/// `trim` has returned, a get here never returns the value the memory tier held before, and
/// observers hear of the change without this process touching the cache.
@Suite("cache memory tier across processes")
struct CacheCoherenceProcessTests {
    @Test("a get after another process's put, rm or trim returned sees it, not the memory copy")
    func memoryTierFollowsOtherProcesses() throws {
        try TemporaryDirectory.with { tmp in
            let cli = CacheCLI(dir: tmp.path("cache"))
            let cache = try Cache<[UInt8]>(directory: cli.dir)
            defer { cache.close() }
            try cache.set(Array("old".utf8), forKey: "k")
            try cache.set(Array("kept".utf8), forKey: "other")
            #expect(cache.memory.contains("k"))

            try cli.succeed("put", ["k", "new"])
            #expect(try cache.value(forKey: "k") == Array("new".utf8))
            #expect(try cache.value(forKey: "other") == Array("kept".utf8))

            #expect(cache.memory.contains("k"))
            try cli.succeed("rm", ["k"])
            #expect(try cache.value(forKey: "k") == nil)

            #expect(cache.memory.contains("other"))
            try cli.succeed("trim", ["--count-limit", "0"])
            #expect(try cache.value(forKey: "other") == nil)
            #expect(try cache.contains("other") == false)
        }
    }

    @Test("observers hear another process's set and removal without touching the cache")
    func otherProcessesChangesArePushed() throws {
        try TemporaryDirectory.with { tmp in
            let cli = CacheCLI(dir: tmp.path("cache"))
            let cache = try Cache<[UInt8]>(directory: cli.dir)
            defer { cache.close() }
            try cache.set(Array("old".utf8), forKey: "k")
            let heard = Mutex<[CacheEvent]>([])
            let arrived = DispatchSemaphore(value: 0)
            let observation = cache.observeEvents { event in
                guard event.origin == .otherProcess else { return }
                heard.withLock { $0.append(event) }
                arrived.signal()
            }
            defer { observation.cancel() }

            try cli.succeed("put", ["k", "new"])
            #expect(arrived.wait(timeout: .now() + 10) == .success)
            // Pushed: the memory copy went without a get here.
            #expect(!cache.memory.contains("k"))
            try cli.succeed("rm", ["k"])
            #expect(arrived.wait(timeout: .now() + 10) == .success)
            #expect(
                heard.withLock { $0 } == [
                    CacheEvent(.didAdd, key: "k", tier: .disk, origin: .otherProcess),
                    CacheEvent(.didRemove, key: "k", tier: .disk, origin: .otherProcess),
                ])
        }
    }
}
