// Store kinds (docs/FORMAT.md 2.12): the marks a layer puts on its stores, and the opens they
// refuse. Every refusal is checked to leave the files byte for byte as they were.

import MappedKVFormat
import Testing

@testable import MappedKV

@Suite("Store kinds")
struct StoreKindTests {
    static let journal = StoreKind(name: "com.example.journal", version: "3")
    static let other = StoreKind(name: "com.example.other", version: "1")

    static func configuration(
        _ kind: StoreKind?, readOnly: Bool = false, keyExpiry: Duration? = nil, clock: ExpiryClock = .system
    ) -> Configuration {
        Configuration(isReadOnly: readOnly, clock: clock, keyExpiry: keyExpiry, storeKind: kind)
    }

    /// Both files of store `id`, to compare before and after a refused open.
    static func files(_ dir: TemporaryDirectory, _ id: String) -> [[UInt8]?] {
        [fileBytes(dir.file(id)), fileBytes(dir.file(id + ".crc"))]
    }

    @Test("an empty store opened with a kind is marked with two string values; a plain open then refuses it")
    func marksAnEmptyStore() throws {
        let dir = TemporaryDirectory("kind-mark")
        let store = try MappedKV(id: "j", directory: dir.path, configuration: Self.configuration(Self.journal))
        #expect(try store.payload(forKey: "\u{1}com.example.journal") == Array("\u{1}3".utf8))
        #expect(try store.payload(forKey: "\u{1}mappedkv.kind") == [19] + Array("com.example.journal".utf8))
        #expect(try store.allKeys == [StoreKind.kindKey, Self.journal.markerKey].sorted())
        try store.set("x", forKey: "entry")
        store.close()

        let before = Self.files(dir, "j")
        #expect(throws: MappedKVError.wrongStoreKind(id: "j", expected: nil, found: "com.example.journal")) {
            _ = try MappedKV(id: "j", directory: dir.path)
        }
        #expect(throws: MappedKVError.wrongStoreKind(id: "j", expected: nil, found: "com.example.journal")) {
            _ = try MappedKV(id: "j", directory: dir.path, configuration: Self.configuration(nil, readOnly: true))
        }
        #expect(Self.files(dir, "j") == before, "a refused open changes nothing")

        let reopened = try MappedKV(id: "j", directory: dir.path, configuration: Self.configuration(Self.journal))
        #expect(try reopened.string(forKey: "entry") == "x")
        #expect(try reopened.count == 3)
    }

    @Test("a store with keys and no mark, or with another kind's mark, is refused and left as it was")
    func refusesOtherStores() throws {
        let dir = TemporaryDirectory("kind-refuse")
        let plain = try MappedKV(id: "plain", directory: dir.path)
        try plain.set("v", forKey: "k")
        plain.close()
        _ = try MappedKV(id: "other", directory: dir.path, configuration: Self.configuration(Self.other))

        for (id, found) in [("plain", nil), ("other", "com.example.other")] as [(String, String?)] {
            let before = Self.files(dir, id)
            for readOnly in [false, true] {
                #expect(throws: MappedKVError.wrongStoreKind(id: id, expected: "com.example.journal", found: found)) {
                    _ = try MappedKV(
                        id: id, directory: dir.path, configuration: Self.configuration(Self.journal, readOnly: readOnly)
                    )
                }
            }
            #expect(Self.files(dir, id) == before, "store '\(id)' is unchanged")
        }
        #expect(try MappedKV(id: "plain", directory: dir.path).string(forKey: "k") == "v")
        let message = MappedKVError.wrongStoreKind(id: "plain", expected: "com.example.journal", found: nil).description
        #expect(message.contains("not marked as a 'com.example.journal' store"), "\(message)")
    }

    @Test("a store marked with the version key alone opens with its kind; a writable open adds the kind key")
    func acceptsAStoreMarkedByAnEarlierRelease() throws {
        let dir = TemporaryDirectory("kind-legacy")
        let early = try MappedKV(id: "j", directory: dir.path)
        try early.set("2", forKey: Self.journal.markerKey)
        try early.set("x", forKey: "entry")
        early.close()

        let before = Self.files(dir, "j")
        let reader = try MappedKV(
            id: "j", directory: dir.path, configuration: Self.configuration(Self.journal, readOnly: true))
        #expect(try reader.string(forKey: Self.journal.markerKey) == "2", "the store's own version is kept")
        #expect(try reader.contains(StoreKind.kindKey) == false)
        reader.close()
        #expect(Self.files(dir, "j") == before, "a read-only open writes nothing")

        let writer = try MappedKV(id: "j", directory: dir.path, configuration: Self.configuration(Self.journal))
        #expect(try writer.string(forKey: StoreKind.kindKey) == "com.example.journal")
        #expect(try writer.string(forKey: Self.journal.markerKey) == "2")
        writer.close()
        #expect(throws: MappedKVError.wrongStoreKind(id: "j", expected: nil, found: "com.example.journal")) {
            _ = try MappedKV(id: "j", directory: dir.path)
        }
    }

    @Test("a read-only open of an empty store with a kind writes no mark")
    func readOnlyOpenOfAnEmptyStoreWritesNothing() throws {
        let dir = TemporaryDirectory("kind-read-only")
        try MappedKV(id: "e", directory: dir.path).close()
        let before = Self.files(dir, "e")
        let reader = try MappedKV(
            id: "e", directory: dir.path, configuration: Self.configuration(Self.journal, readOnly: true))
        #expect(try reader.count == 0)
        reader.close()
        #expect(Self.files(dir, "e") == before)
        #expect(try MappedKV(id: "e", directory: dir.path).count == 0, "still a plain store")
    }

    @Test("with key expiry turned on at open (of a new store or a marked one) or later, the marks never expire")
    func marksOutliveKeyExpiry() throws {
        let dir = TemporaryDirectory("kind-expiry")
        let clock = ManualClock(1_700_000_000)
        try MappedKV(id: "marked", directory: dir.path, configuration: Self.configuration(Self.journal)).close()
        let configuration = Self.configuration(Self.journal, keyExpiry: .seconds(5), clock: clock.expiryClock)
        for id in ["new", "marked", "enabled later"] {
            let store: MappedKV
            if id == "enabled later" {
                var withoutExpiry = configuration
                withoutExpiry.keyExpiry = nil
                store = try MappedKV(id: id, directory: dir.path, configuration: withoutExpiry)
                try store.enableKeyExpiry(defaultDuration: .seconds(5))
            } else {
                store = try MappedKV(id: id, directory: dir.path, configuration: configuration)
            }
            #expect(store.isKeyExpiryEnabled)
            try store.set("x", forKey: "entry")
            clock.advance(60)
            #expect(try store.contains("entry") == false, "the entry took the default lifetime")
            #expect(try store.allKeys == [StoreKind.kindKey, Self.journal.markerKey].sorted(), "store '\(id)'")
            store.close()
            #expect(throws: MappedKVError.wrongStoreKind(id: id, expected: nil, found: "com.example.journal")) {
                _ = try MappedKV(id: id, directory: dir.path, configuration: Configuration(clock: clock.expiryClock))
            }
        }
    }

    @Test("a kind whose name or version cannot mark a store is refused before any file is made")
    func invalidKindsAreRefused() throws {
        let dir = TemporaryDirectory("kind-invalid")
        let long = String(repeating: "n", count: StoreKind.maximumLength + 1)
        for kind in [
            StoreKind(name: "", version: "1"), StoreKind(name: "a", version: ""),
            StoreKind(name: long, version: "1"), StoreKind(name: "mappedkv.kind", version: "1"),
        ] {
            #expect(throws: MappedKVError.self) {
                _ = try MappedKV(id: "s", directory: dir.path, configuration: Self.configuration(kind))
            }
        }
        #expect(fileBytes(dir.file("s")) == nil && fileBytes(dir.file("s.crc")) == nil)
    }
}
