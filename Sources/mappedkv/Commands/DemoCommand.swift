import ArgumentParser
import Foundation
import MappedKV

/// `mappedkv demo`: a tour of the store on a default directory.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Create a store, write and read typed values, compact it, reopen it and show its state.")

    @Option(name: .long, help: "The directory for the demo store (default: <tmp>/mappedkv-demo).")
    var root: String = FileManager.default.temporaryDirectory.appendingPathComponent("mappedkv-demo").path

    /// Accepted so that one set of store options fits every command; the tour uses none of them.
    @OptionGroup var access: StoreAccessOptions

    struct Profile: Codable, Equatable {
        var name: String
        var tags: [String]
        var retries: Int
    }

    func run() throws {
        let reason = "the tour always opens its own plain, single-process store"
        access.noteUnused(
            [(.multiProcess, reason), (.lock, reason), (.key, reason), (.verbose, reason), (.noIndexFile, reason)],
            command: "demo")
        try reportingErrors { try tour() }
    }

    private func tour() throws {
        print("MappedKV demo: store 'demo' in \(root)")
        let store = try MappedKV(id: "demo", directory: root)
        try store.clearAll()

        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded())
        let profile = Profile(name: "worker-1", tags: ["eu", "batch"], retries: 3)
        try store.set(true, forKey: "enabled")
        try store.set(Int32(-42), forKey: "int32")
        try store.set(UInt32.max, forKey: "uint32")
        try store.set(Int64.min, forKey: "int64")
        try store.set(UInt64.max, forKey: "uint64")
        try store.set(Float(1.5), forKey: "float")
        try store.set(Double.pi, forKey: "double")
        try store.set("hello, MMKV ✓", forKey: "string")
        try store.set([UInt8]([0x00, 0xFF, 0x7F, 0x80]), forKey: "bytes")
        try store.set(["a", "bc", ""], forKey: "strings")
        try store.set(now, forKey: "date")
        try store.set(profile, forKey: "profile")

        print("\nTyped values written and read back:")
        func show(_ key: String, _ value: Any?) {
            print("  \(key.padding(toLength: 8, withPad: " ", startingAt: 0)) \(value.map { "\($0)" } ?? "nil")")
        }
        show("enabled", try store.bool(forKey: "enabled"))
        show("int32", try store.int32(forKey: "int32"))
        show("uint32", try store.uint32(forKey: "uint32"))
        show("int64", try store.int64(forKey: "int64"))
        show("uint64", try store.uint64(forKey: "uint64"))
        show("float", try store.float(forKey: "float"))
        show("double", try store.double(forKey: "double"))
        show("string", try store.string(forKey: "string"))
        show("bytes", try store.bytes(forKey: "bytes"))
        show("strings", try store.strings(forKey: "strings"))
        show("date", try store.date(forKey: "date"))
        show("profile", try store.value(forKey: "profile", as: Profile.self))

        let writes = 20_000
        let start = ContinuousClock.now
        for i in 0..<writes { try store.set(Int32(i), forKey: "counter-\(i % 500)") }
        let elapsed = ContinuousClock.now - start
        let nanos = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
        print(
            "\n\(writes) overwrites of 500 counters: \(Int(nanos / Double(writes))) ns per set (this build), file \(try store.totalSize) bytes"
        )

        for i in 0..<250 { try store.removeValue(forKey: "counter-\(i)") }
        try store.trim()
        print(
            "Removed 250 counters and trimmed: \(try store.count) keys, file \(try store.totalSize) bytes, \(try store.actualSize) bytes used"
        )
        store.close()

        let reopened = try MappedKV(id: "demo", directory: root)
        defer { reopened.close() }
        let ok =
            try reopened.string(forKey: "string") == "hello, MMKV ✓"
            && reopened.int32(forKey: "counter-499") == 19_999
            && reopened.value(forKey: "profile", as: Profile.self) == profile
            && reopened.date(forKey: "date") == now
            && reopened.count == 262
        print("Reopened: \(try reopened.count) keys, values \(ok ? "intact" : "WRONG")")

        let report = try StoreInspector.inspect(id: "demo", directory: root)
        print("\nmappedkv info --root \(root) --id demo")
        print(InspectionText.info(report).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
        guard ok, report.isSound else { throw ExitCode.failure }
    }
}
