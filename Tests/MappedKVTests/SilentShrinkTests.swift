import Foundation
import Testing

@testable import MappedKV

/// A multi-process writer skips the catch-up's `fstat` when the meta stamp has not moved and the
/// append ends inside the page where the region ends (docs/FORMAT.md 6.3). MMKV's `trim` can shrink
/// the file without moving the stamp; this shrinks it the same way behind the store's back and
/// checks that appends inside the kept page land safely and the first one past it remaps (a
/// write past the end of the file would kill this process with SIGBUS).
@Suite("Multi-process appends after a silent shrink")
struct SilentShrinkTests {
    @Test("appends after an MMKV-style trim without a sequence increment neither fault nor get lost")
    func silentShrink() throws {
        let dir = TemporaryDirectory("silent-shrink")
        let configuration = Configuration(isMultiProcess: true, expectedCapacity: 64 * 1024)
        let store = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        for i in 0..<5 { try store.set(Int32(i), forKey: "k\(i)") }
        #expect(try store.totalSize == 64 * 1024)
        let sequence = try store.info().meta.sequence
        // What MMKV 2.4.2's trim does when no full write-back is pending: halve while more than twice
        // the used bytes, not below its one-page capacity, round up to pages; the meta is left alone.
        let used = try store.actualSize + 4
        let shrunk = max(4096, (used + 4095) / 4096 * 4096)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: dir.file("s")))
        try handle.truncate(atOffset: UInt64(shrunk))
        try handle.close()
        // Appends inside the kept page (no catch-up), then past it (catch-up, remap, growth).
        let value = String(repeating: "v", count: 100)
        for i in 0..<100 { try store.set("\(i)-\(value)", forKey: "s\(i)") }
        try store.removeValue(forKey: "k0")
        #expect(try store.info().meta.sequence > sequence, "the growth past the kept page moved the sequence")
        #expect(try store.string(forKey: "s99") == "99-\(value)")
        store.close()
        let reopened = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        #expect(try reopened.count == 104)
        #expect(try reopened.int32(forKey: "k4") == 4)
        #expect(try reopened.string(forKey: "s0") == "0-\(value)")
        #expect(reopened.recoveryReport == nil)
    }
}
