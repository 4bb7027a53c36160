// What the tests share: a temporary directory per test, a clock the tests move by hand, and a
// deadline to poll a condition against instead of sleeping.
//
// Invariant: every test gets a directory no other test uses, removed when the test ends, and time
// in a driver built with a `ManualClock` moves only when the test advances it.

import Foundation
import MappedKV
import Synchronization

@testable import HummingbirdMappedKV

/// A directory of its own for one test, removed by `remove()`.
struct TemporaryDirectory {
    let path: String

    init() throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("hb-mappedkv-test-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Wall-clock time that moves only when a test says so, to the nanosecond.
final class ManualClock: Sendable {
    private let nanoseconds: Mutex<Int64>

    /// A clock at `start` milliseconds since 1970.
    init(start: Int64 = 1_800_000_000_000) {
        nanoseconds = Mutex(start * 1_000_000)
    }

    /// Now, in nanoseconds since 1970.
    var now: Int64 { nanoseconds.withLock { $0 } }

    /// Moves the clock forward by `duration` (whole nanoseconds).
    func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        nanoseconds.withLock { $0 += seconds * 1_000_000_000 + attoseconds / 1_000_000_000 }
    }
}

extension MappedKVPersistDriver {
    /// A driver on `directory` whose time is `clock`'s.
    static func testing(
        directory: String, clock: ManualClock, configuration: Configuration = Configuration()
    ) throws -> MappedKVPersistDriver {
        try MappedKVPersistDriver(
            directory: directory, configuration: configuration, logger: MappedKV.silentLogger,
            now: { clock.now })
    }
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
func eventually(
    within timeout: Duration = .seconds(10), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while clock.now < deadline {
        if try await condition() { return true }
        await Task.yield()
        try? await Task.sleep(for: .milliseconds(5))
    }
    return try await condition()
}
