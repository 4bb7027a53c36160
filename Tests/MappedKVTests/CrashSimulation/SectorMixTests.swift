import Foundation
import Testing

@testable import MappedKV

/// The power loss a new user can stage by hand: a store of 100 keys closed by one process (A),
/// then 5 more writes by another (B), and every mix of A's and B's 512-byte sectors in both files.
@Suite("Sector mixes of two states")
struct SectorMixTests {
    typealias Files = (data: [UInt8], meta: [UInt8])

    static func read(_ dir: TemporaryDirectory) throws -> Files {
        (try #require(fileBytes(dir.file("s"))), try #require(fileBytes(dir.file("s.crc"))))
    }

    /// A's files, B's files while its writer still runs (before any durability point), B's files
    /// after it closed, and the contents after each of B's writes.
    static func states(key: CryptKey?) throws -> (a: Files, b: Files, bClosed: Files, contents: [[String: [UInt8]]]) {
        let dir = TemporaryDirectory("sector-mix")
        let configuration = Configuration(cryptKey: key)
        let first = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        for index in 0..<100 { try first.set("value-\(index)", forKey: "k\(index)") }
        first.close()
        let a = try read(dir)
        let second = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        var contents = [try SectorMixTests.contents(second)]
        for index in 0..<5 {
            try second.set(String(repeating: "n\(index)", count: 150), forKey: "n\(index)")
            contents.append(try SectorMixTests.contents(second))
        }
        let b = try read(dir)
        second.close()
        return (a, b, try read(dir), contents)
    }

    static func contents(_ store: MappedKV) throws -> [String: [UInt8]] { try MappedKVTests.contents(of: store) }

    /// Every file made of `a`'s and `b`'s sectors where they differ (with `b`'s size).
    static func mixes(_ a: [UInt8], _ b: [UInt8]) -> [[UInt8]] {
        let sectors = stride(from: 0, to: b.count, by: 512).filter { start in
            let end = min(start + 512, b.count)
            return start >= a.count || Array(a[start..<min(end, a.count)]) != Array(b[start..<end])
        }
        precondition(sectors.count <= 10, "too many sectors to mix exhaustively")
        return (0..<(1 << sectors.count)).map { mask in
            var file = b
            for (bit, start) in sectors.enumerated() where mask & (1 << bit) != 0 && start < a.count {
                let end = min(start + 512, b.count, a.count)
                file.replaceSubrange(start..<end, with: a[start..<end])
            }
            return file
        }
    }

    /// Opens every mix of `a`'s and `b`'s sectors, in both files, with no handler, and hands
    /// each store to `check` (which must not close it), then closes it and returns how many opened.
    static func openEveryMix(
        of a: Files, and b: Files, key: CryptKey?, in dir: TemporaryDirectory, _ check: (MappedKV) throws -> Void
    ) throws -> Int {
        var opened = 0
        for data in mixes(a.data, b.data) {
            for meta in mixes(a.meta, b.meta) {
                try CrashStateExplorer.clear(dir.path)
                try writeFile(dir.file("s"), data)
                try writeFile(dir.file("s.crc"), meta)
                let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(cryptKey: key))
                try check(store)
                store.close()
                opened += 1
            }
        }
        return opened
    }

    @Test(
        "a crash before B's durability point: every mix opens, with no handler, as the 100 keys plus a prefix of B's writes, as writes lost and not damage",
        arguments: [false, true])
    func beforeTheDurabilityPoint(encrypted: Bool) throws {
        let key = encrypted ? CryptKey(Array("sector-mix".utf8)) : nil
        let (a, b, _, contents) = try Self.states(key: key)
        let dir = TemporaryDirectory("sector-mix-open")
        var lost = 0
        let opened = try Self.openEveryMix(of: a, and: b, key: key, in: dir) { store in
            let loaded = try Self.contents(store)
            #expect(contents.contains(loaded), "a state that is no prefix of B's writes: \(loaded.count) keys")
            #expect(store.recoveryReport == nil)
            if store.crashLossReport != nil { lost += 1 }
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            #expect(!names.contains { $0.contains(".corrupt-") }, "copies made: \(names)")
        }
        #expect(opened >= 16)
        #expect(lost > 0)
    }

    @Test(
        "files that break the contract (B's meta after its close, A's data): every mix still opens, with no handler, as the 100 keys plus a prefix of B's writes",
        arguments: [false, true])
    func afterTheDurabilityPoint(encrypted: Bool) throws {
        let key = encrypted ? CryptKey(Array("sector-mix".utf8)) : nil
        let (a, _, closed, contents) = try Self.states(key: key)
        let dir = TemporaryDirectory("sector-mix-closed")
        var damaged = 0
        _ = try Self.openEveryMix(of: a, and: closed, key: key, in: dir) { store in
            let loaded = try Self.contents(store)
            #expect(contents.contains(loaded), "a state that is no prefix of B's writes: \(loaded.count) keys")
            if let report = store.recoveryReport {
                // The disk lost data the meta says was flushed: damage, copied aside, and the
                // longest prefix a checkpoint vouches for kept.
                damaged += 1
                #expect(report.quarantinedFiles.count == 2)
                #expect(report.event.proposal.basis == .checkpoint)
            }
        }
        #expect(damaged > 0)
    }
}
