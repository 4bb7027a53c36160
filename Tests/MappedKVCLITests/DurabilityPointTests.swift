import Foundation
import MappedKVProcessTestSupport
import Testing

/// Every command that writes ends with a durability point (docs/FORMAT.md 3.5): when it exits,
/// the meta file's durability checkpoint is the state its meta describes.
@Suite("CLI durability points")
struct DurabilityPointTests {
    /// The meta's size and CRC, and the durability checkpoint's (meta offsets 120 and 124).
    static func stateAndDurablePoint(_ metaPath: String) throws -> (state: [UInt8], durable: [UInt8]) {
        let meta = [UInt8](try Data(contentsOf: URL(fileURLWithPath: metaPath)))
        #expect(Array(meta[112..<116]) == Array("MKVc".utf8), "the checkpoints are laid out")
        return (Array(meta[28..<32]) + Array(meta[0..<4]), Array(meta[120..<128]))
    }

    @Test("set, apply, import, remove, rekey and expire each leave the durability point at the state they wrote")
    func writingCommandsEndDurable() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path("root")
            let store = CLI.store(root, "s")
            let meta = root + "/s.crc"
            let steps: [(String, [String], String?)] = [
                ("set", ["set", "--create"] + store + ["a", "one"], nil),
                ("apply", ["apply"] + store, "set-string b two\nset-int32 c 3\n"),
                ("import", ["import"] + store, "{\"key\": \"d\", \"payload\": \"2a\"}\n"),
                ("remove", ["remove"] + store + ["a"], nil),
                ("rekey", ["rekey"] + store + ["--new-key", "k1"], nil),
            ]
            for (name, arguments, input) in steps {
                if let input { try CLI.succeed(arguments, stdin: input) } else { try CLI.succeed(arguments) }
                let (state, durable) = try Self.stateAndDurablePoint(meta)
                #expect(state == durable, "after \(name): the last durability point is not the state written")
            }
        }
    }
}
