import Foundation
import Glibc
import MappedKVFormat
import Synchronization

@testable import MappedKV

/// A fresh directory for one test, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init(_ name: String = "test", base: String? = nil) {
        let base = base ?? FileManager.default.temporaryDirectory.path
        path = "\(base)/mappedkv-tests-\(name)-\(UUID().uuidString)"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
}

/// A small, fast, seeded generator so every random test is reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The package's Vectors folder.
let vectorsDirectory: String = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Vectors/mmkv-2.4.2").path) {
            return url.appendingPathComponent("Vectors").path
        }
    }
    fatalError("Vectors folder not found above \(#filePath)")
}()

/// Copies a golden MMKV store's root folder into `directory` (writable copies).
func copyGoldenStore(_ caseName: String, to directory: TemporaryDirectory) throws {
    let source = "\(vectorsDirectory)/mmkv-2.4.2/\(caseName)/root"
    for name in try FileManager.default.contentsOfDirectory(atPath: source) {
        let data = try Data(contentsOf: URL(fileURLWithPath: source + "/" + name))
        try data.write(to: URL(fileURLWithPath: directory.file(name)))
    }
}

/// Parses a `.expect` file into key -> payload hex, checking its trailing count line.
func readExpect(_ caseName: String, id: String) throws -> [String: String] {
    let text = try String(contentsOfFile: "\(vectorsDirectory)/mmkv-2.4.2/\(caseName)/\(id).expect", encoding: .utf8)
    var result: [String: String] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#count") {
        let parts = line.split(separator: "\t", maxSplits: 1)
        result[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
    }
    return result
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// The bytes of a file, or nil if it does not exist.
func fileBytes(_ path: String) -> [UInt8]? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    return [UInt8](data)
}

/// Writes `bytes` to `path`, replacing it.
func writeFile(_ path: String, _ bytes: [UInt8]) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The store's live contents keyed by the hex of each key's UTF-8 bytes, so that canonically
/// equivalent but byte-distinct keys (precomposed and decomposed "é") stay distinct, as in MMKV.
func contentsByKeyBytes(of store: MappedKV) throws -> [String: [UInt8]] {
    var result: [String: [UInt8]] = [:]
    for entry in try store.entries() { result[hex(Array(entry.key.utf8))] = entry.payload }
    return result
}

/// The store's live contents as key -> payload.
func contents(of store: MappedKV) throws -> [String: [UInt8]] {
    var result: [String: [UInt8]] = [:]
    for entry in try store.entries() { result[entry.key] = entry.payload }
    return result
}

/// A short description of how two key -> payload maps differ (empty if equal).
func differences(_ actual: [String: [UInt8]], _ expected: [String: [UInt8]]) -> String {
    var lines: [String] = []
    for key in Set(actual.keys).union(expected.keys).sorted() where actual[key] != expected[key] {
        func describe(_ bytes: [UInt8]?) -> String {
            guard let bytes else { return "absent" }
            return bytes.count > 24 ? "\(bytes.count) bytes \(hex(Array(bytes.prefix(12))))..." : hex(bytes)
        }
        lines.append("\(key.prefix(20)): actual \(describe(actual[key])), expected \(describe(expected[key]))")
    }
    return lines.prefix(10).joined(separator: "; ")
}

/// Collects the damage events a recovery handler is given (handlers may run on any thread).
final class EventLog: Sendable {
    private let events = Mutex<[DamageEvent]>([])
    func append(_ event: DamageEvent) { events.withLock { $0.append(event) } }
    var all: [DamageEvent] { events.withLock { $0 } }
}
