// Proves that damage is a miss, never other bytes: a value file truncated, emptied, lengthened,
// with a flipped byte, deleted, replaced by another entry's file or with a bad header, and a
// manifest record replaced by random bytes, written with a wrong CRC or claiming a 2 GiB value
// (which a read must not allocate for a 500-byte file), each makes the entry a
// miss that is dropped (by the read, or by `verify(repair: true)` after `verify()` listed it),
// leaves the other entries intact and the cache clean. Also that orphans (unrecorded files and
// folders in files/, temporary files of dead processes, leftover trash) are counted by
// `statistics()`, listed by `verify()` and removed by `trim()` (even while removeAll's background
// deletion works on the same trash folder), while a live writer's temporary file is left alone.
import Foundation
import MappedKV
import MappedKVCache
import Testing

@Suite struct DiskCacheDamageTests {
    /// The entries every case starts with: the victim plus three that must survive.
    static let victimFile = (0..<500).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    static let victimInline = Array("the inline victim".utf8)
    static let survivors: [String: [UInt8]] = [
        "same-size": (0..<500).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) },
        "other-size": [UInt8](repeating: 0xAB, count: 300),
        "inline": Array("a small inline value".utf8),
    ]

    enum FileDamage: String, CaseIterable, Sendable {
        case truncatedToHalf, truncatedToHeader, emptied, oneByteLonger, flippedValueByte, flippedLastByte
        case deleted, replacedBySameSizeFile, replacedByOtherSizeFile, badMagic, badVersion, badEncryptedFlag
    }

    enum RecordDamage: String, CaseIterable, Sendable {
        case inlineRandomBytes, fileRandomBytes, inlineWrongCRC, fileWrongCRC, inlineFlippedValue
        case inlineTruncated, fileTruncatedName, unknownVersion, fileHugeSize
    }

    /// A cache with a 64-byte inline threshold holding the victims and the survivors.
    func populatedCache(_ dir: CacheTestDirectory) throws -> DiskCache {
        let cache = try DiskCache(directory: dir.path, configuration: DiskCacheConfiguration(inlineThreshold: 64))
        try cache.set(Self.victimFile, forKey: "victim-file")
        try cache.set(Self.victimInline, forKey: "victim-inline", extendedData: [1, 2])
        for (key, value) in Self.survivors { try cache.set(value, forKey: key) }
        return cache
    }

    // MARK: Value files

    @Test(arguments: FileDamage.allCases, [true, false])
    func aDamagedValueFileIsAMissAndIsDropped(damage: FileDamage, detectByReading: Bool) throws {
        let dir = CacheTestDirectory("damage")
        let cache = try populatedCache(dir)
        let name = try #require(DiskFixtures.plainFileName(holding: Self.victimFile, in: dir.path))
        let path = dir.file("files/" + name)
        var bytes = try #require(DiskFixtures.contents(path))
        switch damage {
        case .truncatedToHalf: bytes = Array(bytes.prefix(bytes.count / 2))
        case .truncatedToHeader: bytes = Array(bytes.prefix(6))
        case .emptied: bytes = []
        case .oneByteLonger: bytes.append(0)
        case .flippedValueByte: bytes[6 + 100] ^= 0x40
        case .flippedLastByte: bytes[bytes.count - 1] ^= 0x01
        case .deleted: break
        case .replacedBySameSizeFile, .replacedByOtherSizeFile:
            let other = Self.survivors[damage == .replacedBySameSizeFile ? "same-size" : "other-size"]!
            let otherName = try #require(DiskFixtures.plainFileName(holding: other, in: dir.path))
            bytes = try #require(DiskFixtures.contents(dir.file("files/" + otherName)))
        case .badMagic: bytes[0] = UInt8(ascii: "X")
        case .badVersion: bytes[4] = 2
        case .badEncryptedFlag: bytes[5] = 1
        }
        if damage == .deleted {
            try FileManager.default.removeItem(atPath: path)
        } else {
            try DiskFixtures.write(bytes, to: path)
        }
        try expectDropped("victim-file", from: cache, dir, detectByReading: detectByReading)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    // MARK: Manifest records

    @Test(arguments: RecordDamage.allCases, [true, false])
    func aDamagedManifestRecordIsAMissAndIsDropped(damage: RecordDamage, detectByReading: Bool) throws {
        let dir = CacheTestDirectory("damage")
        try populatedCache(dir).close()
        let victim = damage.rawValue.hasPrefix("file") ? "victim-file" : "victim-inline"
        let manifest = try MappedKV(
            id: "manifest", directory: dir.path,
            configuration: Configuration(isMultiProcess: true, processLock: .sharedMemory))
        var record = try #require(try manifest.value(forKey: "e:" + victim, as: [UInt8].self))
        var random = DiskTestRandom(seed: UInt64(damage.rawValue.utf8.count))
        // The layout: version, flags, varint size, CRC-32 (4 bytes), ...; sizes here are under 16 KiB.
        let crcOffset = record[2] & 0x80 == 0 ? 3 : 4
        switch damage {
        case .inlineRandomBytes, .fileRandomBytes: record = random.bytes(record.count)
        case .inlineWrongCRC, .fileWrongCRC: record[crcOffset] ^= 0x10
        case .inlineFlippedValue: record[record.count - 1] ^= 0x80
        case .inlineTruncated: record.removeLast()
        case .fileTruncatedName: record[record.count - 1] = UInt8(ascii: "z")  // no longer 32 hex digits
        case .unknownVersion: record[0] = 9
        case .fileHugeSize:  // the size varint (2 bytes for 500) replaced by Int32.max's 5 bytes
            record.replaceSubrange(2..<4, with: [0xFF, 0xFF, 0xFF, 0xFF, 0x07])
        }
        try manifest.set(record, forKey: "e:" + victim)
        manifest.close()

        let cache = try DiskCache(directory: dir.path, configuration: DiskCacheConfiguration(inlineThreshold: 64))
        try expectDropped(victim, from: cache, dir, detectByReading: detectByReading)
        let other = victim == "victim-file" ? "victim-inline" : "victim-file"
        #expect(try cache.value(forKey: other) == (other == "victim-file" ? Self.victimFile : Self.victimInline))
    }

    /// Checks that `victim` is a miss that gets dropped, by a read or by verify and repair, and
    /// that the survivors are untouched and the cache is clean afterwards.
    func expectDropped(
        _ victim: String, from cache: DiskCache, _ dir: CacheTestDirectory, detectByReading: Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        if detectByReading {
            #expect(try cache.value(forKey: victim) == nil, sourceLocation: sourceLocation)
            #expect(try cache.entry(forKey: victim) == nil, sourceLocation: sourceLocation)
            #expect(try cache.contains(victim) == false, sourceLocation: sourceLocation)
            let problems = try cache.verify()
            #expect(!problems.contains { $0.hasPrefix(victim + ":") }, "\(problems)", sourceLocation: sourceLocation)
        } else {
            let problems = try cache.verify()
            #expect(problems.contains { $0.hasPrefix(victim + ":") }, "\(problems)", sourceLocation: sourceLocation)
            #expect(try cache.verify(repair: true) == problems, sourceLocation: sourceLocation)
        }
        _ = try cache.verify(repair: true)
        #expect(try cache.verify() == [], sourceLocation: sourceLocation)
        #expect(try cache.value(forKey: victim) == nil, sourceLocation: sourceLocation)
        #expect(try !cache.entries().map(\.key).contains(victim), sourceLocation: sourceLocation)
        for (key, value) in Self.survivors {
            #expect(try cache.value(forKey: key) == value, "\(key)", sourceLocation: sourceLocation)
        }
        let statistics = try cache.statistics()
        #expect(statistics.count == Self.survivors.count + 1, sourceLocation: sourceLocation)
        #expect(statistics.orphanCount == 0, sourceLocation: sourceLocation)
        #expect(
            DiskFixtures.names(in: dir.file("files")).count == statistics.fileCount, sourceLocation: sourceLocation)
    }

    // MARK: Orphans

    /// Creates one orphan of each kind and a live temporary file; returns the orphans' paths.
    func makeOrphans(in dir: CacheTestDirectory) throws -> (orphans: [String], liveTemporary: String) {
        let deadPid = DiskFixtures.deadPid()
        let orphans = [
            dir.file("files/0123456789abcdef0123456789abcdef"),
            dir.file("files/not-a-cache-name"),
            dir.file("tmp/\(deadPid)-fedcba9876543210fedcba9876543210.tmp"),
            dir.file("tmp/garbage-without-a-pid"),
            dir.file("trash/0000000000000000ffffffffffffffff"),
            dir.file("files/a-folder"),
        ]
        for path in orphans.prefix(4) { try DiskFixtures.write(Array("orphan".utf8), to: path) }
        for folder in orphans.suffix(2) {
            try FileManager.default.createDirectory(atPath: folder + "/inner", withIntermediateDirectories: true)
            try DiskFixtures.write([1, 2, 3], to: folder + "/inner/file")
        }
        let live = dir.file("tmp/\(getpid())-00000000000000000000000000000001.tmp")
        try DiskFixtures.write([9], to: live)
        return (orphans, live)
    }

    @Test(arguments: [false, true])
    func orphansAreCountedListedAndRemoved(byVerifyRepair: Bool) throws {
        let dir = CacheTestDirectory("orphans")
        let cache = try populatedCache(dir)
        let (orphans, live) = try makeOrphans(in: dir)
        let before = try cache.statistics()
        #expect(before.orphanCount == orphans.count)
        #expect(before.count == Self.survivors.count + 2 && before.fileCount == 3)
        let problems = try cache.verify()
        #expect(problems.count == orphans.count, "\(problems)")
        for orphan in orphans {
            let name = String(orphan.split(separator: "/").last!)
            #expect(problems.contains { $0.contains(name) }, "\(orphan) not in \(problems)")
        }
        if byVerifyRepair {
            #expect(try cache.verify(repair: true) == problems)
        } else {
            let report = try cache.trim()
            #expect(report.orphansRemoved == orphans.count)
            #expect(report.removedEntries == 0 && report.damagedEntries == 0)
        }
        for orphan in orphans { #expect(!FileManager.default.fileExists(atPath: orphan), "\(orphan)") }
        #expect(FileManager.default.fileExists(atPath: live), "a running writer's temporary file was removed")
        #expect(try cache.statistics().orphanCount == 0)
        #expect(try cache.verify() == [])
        #expect(try cache.value(forKey: "victim-file") == Self.victimFile)
        for (key, value) in Self.survivors { #expect(try cache.value(forKey: key) == value) }
    }

    @Test func trimLeavesNoTrashWhileRemoveAllStillDeletesInTheBackground() throws {
        // Both delete the same trash folder at the same time; trim must not return before it is gone.
        let dir = CacheTestDirectory("orphans")
        let cache = try DiskCache(directory: dir.path, configuration: DiskCacheConfiguration(inlineThreshold: 10))
        for round in 0..<50 {
            for index in 0..<20 { try cache.set([UInt8](repeating: UInt8(index), count: 50), forKey: "k\(index)") }
            try cache.removeAll()
            try cache.trim()
            let statistics = try cache.statistics()
            #expect(statistics.orphanCount == 0 && statistics.count == 0, "round \(round)")
            if statistics.orphanCount != 0 { break }
        }
    }

    @Test func anAccessTimeWithoutAnEntryIsListedAndRemoved() throws {
        let dir = CacheTestDirectory("orphans")
        try populatedCache(dir).close()
        let manifest = try MappedKV(
            id: "manifest", directory: dir.path,
            configuration: Configuration(isMultiProcess: true, processLock: .sharedMemory))
        try manifest.set(UInt64(1_700_000_000_000), forKey: "a:ghost")
        manifest.close()
        let cache = try DiskCache(directory: dir.path, configuration: DiskCacheConfiguration(inlineThreshold: 64))
        let problems = try cache.verify()
        #expect(problems.count == 1 && problems.allSatisfy { $0.contains("ghost: access time without an entry") })
        try cache.trim()
        #expect(try cache.verify() == [])
        #expect(try cache.statistics().count == Self.survivors.count + 2)
    }
}
