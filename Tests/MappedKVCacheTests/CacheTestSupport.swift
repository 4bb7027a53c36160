import Foundation
import MappedKVCache
import Synchronization

/// A fresh directory for one test, removed when the value is released.
final class CacheTestDirectory {
    let path: String

    init(_ name: String = "cache") {
        path = FileManager.default.temporaryDirectory.path + "/mappedkv-cache-tests-\(name)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
}

/// A clock the test advances by hand, in milliseconds since 1970.
final class ManualClock: Sendable {
    private let time = Mutex<UInt64>(1_700_000_000_000)

    var now: UInt64 { time.withLock { $0 } }

    func advance(by milliseconds: UInt64) { time.withLock { $0 += milliseconds } }

    var cacheClock: CacheClock { CacheClock { [self] in now } }
}
