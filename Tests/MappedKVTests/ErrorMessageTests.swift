// The store's errors speak for themselves: each names what happened, the store where one is
// involved, and what to do; Foundation's `localizedDescription` says the same.

import Foundation
import MappedKV
import MappedKVFormat
import MappedKVIO
import Testing

@Suite("Error messages")
struct ErrorMessageTests {
    /// One error of every case, with the text its message must contain.
    static let cases: [(MappedKVError, [String])] = [
        (.invalidKey("the key is empty"), ["the key is empty", "1 to"]),
        (.valueTooLarge(size: 3 << 30), ["3221225472 bytes", "under 2 GiB"]),
        (.invalidArgument("the ID is empty"), ["the ID is empty"]),
        (.storeFull("the region would exceed 2 GiB"), ["exceed", "remove keys"]),
        (.corrupted(id: "prefs", reason: .crcMismatch(stored: 1, computed: 2)), ["'prefs'", "CRC", "mappedkv repair"]),
        (.corrupted(id: "prefs", reason: .interruptedWriteBack), ["'prefs'", "read-write open", "isReadOnly"]),
        (
            .wrongCryptKey(id: "vault", reason: .undecodable(.invalidUTF8)),
            ["'vault'", "encryption key", "written with"]
        ),
        (.readOnly(id: "prefs"), ["'prefs'", "read-only", "isReadOnly"]),
        (.closed("store 'prefs' was closed: open it again to use it"), ["'prefs'", "open it again"]),
        (.storeNotFound(path: "/tmp/none/prefs"), ["/tmp/none/prefs", "read-write"]),
        (.valueDecodingFailed(key: "n", type: "Int32", reason: "truncated"), ["'n'", "Int32", "type it was written"]),
        (.valueEncodingFailed(key: "n", reason: "NaN"), ["'n'", "NaN"]),
        (.unsupported("version 9 meta files"), ["version 9"]),
        (.modeConflict(id: "prefs", reason: "another process has it open"), ["'prefs'", "another process"]),
        (.system(SystemCallError(operation: "open", path: "/x", errno: ENOENT)), ["open", "/x"]),
        (
            .crypto("libcrypto could not allocate a cipher context"),
            ["cryptographic", "cipher context", "nothing was committed"]
        ),
    ]

    @Test func everyCaseHasASpecificMessageAndTheSameLocalizedDescription() {
        var seen = Set<String>()
        for (error, fragments) in Self.cases {
            let message = error.description
            for fragment in fragments {
                #expect(message.contains(fragment), "\(message) lacks \(fragment)")
            }
            #expect((error as Error).localizedDescription == message)
            #expect(seen.insert(message).inserted, "two cases share the message \(message)")
        }
    }

    @Test func aWrongKeyIsReportedAsAWrongKeyAndChangesNothing() throws {
        let dir = TemporaryDirectory("wrong-key-message")
        let right = try #require(CryptKey(Array("right key".utf8)))
        let wrong = try #require(CryptKey(Array("wrong key".utf8)))
        do {
            let store = try MappedKV(id: "vault", directory: dir.path, configuration: Configuration(cryptKey: right))
            try store.set("secret", forKey: "k")
            store.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.path + "/vault"))
        let error = #expect(throws: MappedKVError.self) {
            _ = try MappedKV(id: "vault", directory: dir.path, configuration: Configuration(cryptKey: wrong))
        }
        guard case .wrongCryptKey("vault", _)? = error else {
            Issue.record("expected wrongCryptKey, got \(String(describing: error))")
            return
        }
        // Without a key, the IV in its meta file gives the store away: a missing key, not damage.
        let keyless = #expect(throws: MappedKVError.self) {
            _ = try MappedKV(id: "vault", directory: dir.path)
        }
        guard case .missingCryptKey("vault")? = keyless else {
            Issue.record("expected a missing key, got \(String(describing: keyless))")
            return
        }
        #expect(keyless?.description.contains("no key was given: pass its key") == true)
        #expect(keyless?.description.contains("damaged") == false)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.path + "/vault")) == before)
        let store = try MappedKV(id: "vault", directory: dir.path, configuration: Configuration(cryptKey: right))
        #expect(try store.string(forKey: "k") == "secret")
    }

    @Test func aClosedStoreSaysWhichStore() throws {
        let dir = TemporaryDirectory("closed-message")
        let store = try MappedKV(id: "prefs", directory: dir.path)
        store.close()
        let error = #expect(throws: MappedKVError.self) { try store.set(true, forKey: "k") }
        #expect(error?.description.contains("'prefs'") == true, "\(String(describing: error))")
    }
}
