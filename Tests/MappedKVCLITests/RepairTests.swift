import Foundation
import MappedKVProcessTestSupport
import Testing

/// `mappedkv repair`: recovers to the verified state with a report, keeping the damaged copy.
@Suite("Repair command")
struct RepairTests {
    @Test("repair rolls a damaged append back to the last write-back, reports what it dropped, and keeps the copy")
    func repairsDamagedAppend() throws {
        try TemporaryDirectory.with { tmp in
            let root = tmp.path
            let store = CLI.store(root, "s")
            for i in 0..<8 { try CLI.succeed(["set", "--create"] + store + ["a\(i)", "first-\(i)"]) }
            try CLI.succeed(["rekey"] + store)  // a full write-back of a plain store: the last confirmed state
            try CLI.succeed(["set", "--create"] + store + ["late", "appended after the write-back"])
            try CLI.succeed(["verify"] + store)
            // Damage the last append's bytes.
            let meta = try Data(contentsOf: URL(fileURLWithPath: root + "/s.crc"))
            let size = Int(meta[28]) | Int(meta[29]) << 8 | Int(meta[30]) << 16
            var data = try Data(contentsOf: URL(fileURLWithPath: root + "/s"))
            data[4 + size - 3] ^= 0x20
            try data.write(to: URL(fileURLWithPath: root + "/s"))

            let verify = try CLI.run(["verify"] + store)
            #expect(verify.failedCleanly, "\(verify)")
            #expect(verify.stdout.contains("recovery would: keep 8 keys"), "\(verify)")
            let get = try CLI.run(["get"] + store + ["a1"])
            #expect(get.failedCleanly && get.stderr.contains("repair"), "\(get)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/s")) == data, "a failed open changed the file")

            let repair = try CLI.succeed(["repair"] + store)
            #expect(repair.stdout.contains("kept: 8 keys"), "\(repair)")
            #expect(repair.stdout.contains("keys that lost values: late"), "\(repair)")
            #expect(repair.stdout.contains("after: sound, 8 keys"), "\(repair)")
            let copies = try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasPrefix("s.corrupt-") }
            #expect(copies.count == 2, "\(copies)")
            let copy = try #require(copies.first { !$0.hasSuffix(".crc") })
            #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/" + copy)) == data)
            // The copy is itself a store ID that verify reads (and finds damaged).
            #expect(try CLI.run(["verify"] + CLI.store(root, copy)).failedCleanly)
            #expect(try CLI.succeed(["get"] + store + ["--type", "string", "a1"]).stdout.contains("first-1"))
            try CLI.succeed(["verify"] + store)
            #expect(try CLI.succeed(["repair"] + store).stdout.contains("nothing to repair"))
        }
    }

    @Test("repair refuses what looks like a wrong key unless forced")
    func refusesWrongKey() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path, "s")
            try CLI.succeed(["set", "--create"] + store + ["--crypt-key", "right", "k", "v"])
            let before = try Data(contentsOf: URL(fileURLWithPath: tmp.path + "/s"))
            let repair = try CLI.run(["repair"] + store + ["--crypt-key", "wrong"])
            #expect(repair.failedCleanly && repair.stderr.contains("wrong key"), "\(repair)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: tmp.path + "/s")) == before)
            #expect(
                try CLI.succeed(["get"] + store + ["--crypt-key", "right", "--type", "string", "k"]).stdout.contains(
                    "v"))
        }
    }
}
