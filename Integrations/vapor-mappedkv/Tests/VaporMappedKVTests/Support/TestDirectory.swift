// A temporary directory of its own for each test, and a clock the tests move by hand, so expiry is
// tested without waiting. Invariant: a directory's path is unique to the test that made it.

import Foundation
import MappedKV
import MappedKVCache
import Synchronization

/// A fresh directory under the system's temporary directory, removed by `remove()`.
struct TestDirectory: Sendable {
    /// The directory's path.
    let path: String

    /// Makes a new empty directory whose name starts with `name`.
    init(_ name: String = "vapor-mappedkv") throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    /// Removes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// A cache clock that stands still until a test moves it.
final class ManualClock: Sendable {
    /// Milliseconds since 1970, as the disk cache counts time.
    private let milliseconds: Atomic<UInt64>

    /// A clock at the current time.
    init() {
        milliseconds = Atomic(UInt64(Date().timeIntervalSince1970 * 1000))
    }

    /// The clock to give a `DiskCacheConfiguration`.
    var cacheClock: CacheClock {
        CacheClock { self.milliseconds.load(ordering: .relaxed) }
    }

    /// The same clock for a store's key expiry (the sessions store's).
    var expiryClock: ExpiryClock {
        ExpiryClock(preciseNow: { .milliseconds(Int64(self.milliseconds.load(ordering: .relaxed))) })
    }

    /// Moves the clock forward by `seconds`.
    func advance(seconds: Int) {
        milliseconds.add(UInt64(seconds) * 1000, ordering: .relaxed)
    }
}
