import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv info` and `mappedkv verify` on sound stores.
@Suite("info and verify")
struct InfoVerifyTests {
    static let requiredInfoFields = ["version", "sequence", "actualSize", "fileSize", "crcOK", "keys", "holder"]

    @Test("info prints name<TAB>value lines with the required fields", arguments: GoldenCase.plain)
    func infoOfGoldenStore(_ golden: GoldenCase) throws {
        let result = try CLI.succeed(["info"] + CLI.store(golden.root, golden.id))
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.hasSuffix("\n"))
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        for line in lines {
            #expect(
                line.split(separator: "\t", omittingEmptySubsequences: false).count == 2,
                "not a name<TAB>value line: '\(line)'")
        }
        let info = TabSeparated.parse(result.stdout)
        for field in Self.requiredInfoFields {
            #expect(info[field] != nil, "info has no \(field) line:\n\(result.stdout)")
        }
        let expected = try golden.info()
        #expect(info["actualSize"] == expected["actualSize"])
        #expect(info["fileSize"] == expected["totalSize"])
        #expect(info["keys"] == expected["count"])
        #expect(info["crcOK"] == "yes")
        #expect(info["status"] == "ok")
        #expect(info["holder"].map { $0 != "-" && Data(hex: $0) != nil } == true, "holder: \(info["holder"] ?? "nil")")
        #expect(info["version"].flatMap { Int($0) }.map { $0 >= 3 } == true, "MMKV 2.4.2 writes meta version >= 3")
        #expect(info["sequence"].flatMap { Int($0) } != nil)
    }

    @Test(
        "info on the golden stores reports their sizes and key counts",
        arguments: [
            ("a_plain", "case_a", "109", "9"), ("c_overwrites", "case_c", "939", "3"),
        ])
    func infoNumbers(_ name: String, _ id: String, _ actualSize: String, _ keys: String) throws {
        let golden = GoldenCase(name: name, id: id)
        let info = TabSeparated.parse(try CLI.succeed(["info"] + CLI.store(golden.root, golden.id)).stdout)
        #expect(info["actualSize"] == actualSize)
        #expect(info["keys"] == keys)
        #expect(info["fileSize"] == "4096")
    }

    @Test("info follows the store as the CLI changes it")
    func infoOfChangingStore() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["apply", "--create"] + store, stdin: "set-int32 a 1\nset-int32 b 2\n")
            let before = TabSeparated.parse(try CLI.succeed(["info"] + store).stdout)
            #expect(before["keys"] == "2")
            #expect(before["crcOK"] == "yes")
            #expect(before["status"] == "ok")
            try CLI.succeed(["apply", "--create"] + store, stdin: "set-int32 a 3\nremove b\n")
            let after = TabSeparated.parse(try CLI.succeed(["info"] + store).stdout)
            #expect(after["keys"] == "1")
            #expect(after["crcOK"] == "yes")
            // Two appended records: the set of a (4 bytes) and the deletion of b (3 bytes).
            let grown = (Int(after["actualSize"] ?? "") ?? 0) - (Int(before["actualSize"] ?? "") ?? 0)
            #expect(grown == 7)
        }
    }

    @Test("info on a missing store fails with a message")
    func infoMissingStore() throws {
        try TemporaryDirectory.with { tmp in
            let result = try CLI.fail(["info"] + CLI.store(tmp.path("root"), "s"))
            #expect(result.stdout.isEmpty)
        }
    }

    @Test("verify exits 0 on a good store and ends with a sound status", arguments: GoldenCase.plain)
    func verifyGoodGolden(_ golden: GoldenCase) throws {
        let result = try CLI.succeed(["verify"] + CLI.store(golden.root, golden.id))
        #expect(result.stderr.isEmpty)
        #expect(result.stdout.hasSuffix("\n"))
        #expect(result.stdout.hasSuffix("status: sound\n"), "\(result)")
        let count = try #require(golden.info()["count"])
        #expect(result.stdout.contains("\(count) keys"), "\(result)")
    }

    @Test("verify exits 0 on a store the CLI wrote")
    func verifyGoodNewStore() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["apply", "--create"] + store, stdin: try GoldenCase.plain[1].script())
            let result = try CLI.succeed(["verify"] + store)
            #expect(result.stdout.hasSuffix("status: sound\n"), "\(result)")
            #expect(result.stdout.contains("3 keys"), "\(result)")
        }
    }

    @Test("a byte changed past the used region does not make a store bad")
    func damagePastUsedRegionIsIgnored() throws {
        try TemporaryDirectory.with { tmp in
            let golden = GoldenCase.plain[0]
            let root = try tmp.copyStore(from: golden.root)
            let path = root + "/" + golden.id
            var data = try Data(contentsOf: URL(fileURLWithPath: path))
            data[4 + 109 + 100] ^= 0xFF
            try data.write(to: URL(fileURLWithPath: path))
            try CLI.succeed(["verify"] + CLI.store(root, golden.id))
            #expect(try CLI.dump(root: root, id: golden.id) == String(decoding: try golden.expected(), as: UTF8.self))
        }
    }
}

extension Data {
    /// The bytes spelled by an even number of hex digits, or nil.
    init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
            index += 2
        }
        self.init(bytes)
    }
}
