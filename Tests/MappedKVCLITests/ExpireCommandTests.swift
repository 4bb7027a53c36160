import Foundation
import Glibc
import MappedKVProcessTestSupport
import Testing

/// `mappedkv expire` and `set --expire-after`. Expiry over time is tested in the library with an
/// injected clock; here the commands, the flag and the stored format are checked.
@Suite("expire")
struct ExpireCommandTests {
    @Test("expire --enable/--disable toggles the meta flag; values keep reading back without the suffix")
    func toggle() throws {
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["set", "--create"] + store + ["a", "hello"])
            #expect(try CLI.succeed(["expire"] + store).stdout == "off\n")
            let refused = try CLI.fail(["set", "--create"] + store + ["--expire-after", "60", "b", "x"])
            #expect(refused.stderr.contains("expiry"), "\(refused)")
            try CLI.succeed(["expire"] + store + ["--enable", "--default-seconds", "3600"])
            #expect(try CLI.succeed(["expire"] + store).stdout == "on\n")
            try CLI.succeed(["set", "--create"] + store + ["--expire-after", "0", "b", "forever"])
            try CLI.succeed(["set", "--create"] + store + ["--expire-after", "86400", "c", "a day"])
            let dump = try CLI.succeed(["dump"] + store).stdout
            #expect(
                dump
                    == "a\t0568656c6c6f\nb\t07666f7265766572\nc\t0561206461 79\n#count\t3\n".replacingOccurrences(
                        of: " ", with: ""))
            let info = TabSeparated.parse(try CLI.succeed(["info"] + store).stdout)
            #expect(info["flags"] == "0x1")
            try CLI.succeed(["verify"] + store)
            try CLI.succeed(["expire"] + store + ["--disable"])
            #expect(TabSeparated.parse(try CLI.succeed(["info"] + store).stdout)["flags"] == "0x0")
            #expect(try CLI.succeed(["dump"] + store).stdout == dump)
            try CLI.fail(["expire"] + store + ["--enable", "--disable"])
        }
    }

    /// The default lifetime is the opening process's (MMKV keeps it out of the files), so a later
    /// command's import or plain set stores 0; the library tests cover those paths with a default.
    @Test("expire --default-seconds and set --expire-after store an expiry no earlier than asked")
    func expiryTimesRoundUp() throws {
        /// The system's wall clock rounded up to a whole second, as the store rounds it.
        func roundedUpNow() -> Int {
            var reading = timespec()
            clock_gettime(CLOCK_REALTIME, &reading)
            return reading.tv_nsec > 0 ? reading.tv_sec + 1 : reading.tv_sec
        }
        func expiresAt(_ store: [String]) throws -> [String: Int] {
            var result: [String: Int] = [:]
            for line in try CLI.succeed(["export"] + store).stdout.split(separator: "\n") {
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                if let key = object?["key"] as? String { result[key] = object?["expiresAt"] as? Int }
            }
            return result
        }
        try TemporaryDirectory.with { tmp in
            let store = CLI.store(tmp.path("root"), "s")
            try CLI.succeed(["set", "--create"] + store + ["a", "before expiry"])
            let enabled = roundedUpNow()
            try CLI.succeed(["expire"] + store + ["--enable", "--default-seconds", "5"])
            let set = roundedUpNow()
            try CLI.succeed(["set"] + store + ["--expire-after", "1", "b", "one second"])
            let times = try expiresAt(store)
            #expect(try #require(times["a"]) >= enabled + 5, "the rewrite at enable: \(times)")
            #expect(try #require(times["b"]) >= set + 1, "set --expire-after: \(times)")
        }
    }
}
