import Foundation
import MappedKV
import MappedKVFormat
import Testing

/// `exportedEntries()` and `importEntries(_:)` carry every value and expiry time exactly, and
/// `Configuration.createsIfMissing` false refuses to create a store.
@Suite("Entry export, import and creation")
struct EntryTransferTests {
    /// A clock the test moves by hand.
    final class ManualClock: @unchecked Sendable {
        private let lock = NSLock()
        private var seconds: UInt32 = 1_800_000_000
        var now: UInt32 { lock.withLock { seconds } }
        func advance(_ delta: UInt32) { lock.withLock { seconds += delta } }
        var expiryClock: ExpiryClock { ExpiryClock { [self] in now } }
    }

    @Test("exported entries imported into another store give the same payloads and expiry times")
    func roundTrip() throws {
        let dir = TemporaryDirectory("entries")
        let clock = ManualClock()
        let source = try MappedKV(
            id: "source", directory: dir.path, configuration: Configuration(clock: clock.expiryClock))
        try source.enableKeyExpiry()
        try source.set(Int32(-7), forKey: "int")
        try source.set("text", forKey: "string")
        try source.set(["a", "b"], forKey: "list")
        try source.set("short-lived", forKey: "session", expiresAfter: .seconds(60))
        let exported = try source.exportedEntries()
        #expect(exported.map(\.key) == ["int", "list", "session", "string"])
        #expect(exported.first { $0.key == "session" }?.expiresAt == clock.now + 60)
        #expect(exported.first { $0.key == "int" }?.expiresAt == ExpirySuffix.never)

        let copy = try MappedKV(id: "copy", directory: dir.path, configuration: Configuration(clock: clock.expiryClock))
        try copy.enableKeyExpiry()
        #expect(try copy.importEntries(exported) == 4)
        #expect(try copy.exportedEntries() == exported)
        #expect(try copy.entries().map(\.payload) == (try source.entries().map(\.payload)))
        clock.advance(61)
        #expect(try copy.string(forKey: "session") == nil, "the imported expiry time still applies")
        #expect(try copy.int32(forKey: "int") == -7)
    }

    @Test("an import with a bad entry writes nothing")
    func badEntryWritesNothing() throws {
        let dir = TemporaryDirectory("entries-bad")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set("kept", forKey: "old")
        let bad = [StoreEntry(key: "new", payload: [0x2A]), StoreEntry(key: "", payload: [0x01])]
        #expect(throws: MappedKVError.self) { try store.importEntries(bad) }
        let empty = [StoreEntry(key: "new", payload: [0x2A]), StoreEntry(key: "x", payload: [])]
        #expect(throws: MappedKVError.self) { try store.importEntries(empty) }
        #expect(try store.allKeys == ["old"])
    }

    @Test("createsIfMissing false reports a missing store and creates nothing; an existing one opens")
    func noCreation() throws {
        let dir = TemporaryDirectory("no-create")
        let strict = Configuration(createsIfMissing: false)
        #expect {
            _ = try MappedKV(id: "s", directory: dir.path + "/sub", configuration: strict)
        } throws: { error in
            guard case MappedKVError.storeNotFound = error else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/sub"))
        let created = try MappedKV(id: "s", directory: dir.path)
        try created.set("v", forKey: "k")
        created.close()
        let reopened = try MappedKV(id: "s", directory: dir.path, configuration: strict)
        #expect(try reopened.string(forKey: "k") == "v")
    }
}
