import Foundation
import Glibc
import MappedKVFormat
import Testing

@testable import MappedKV

/// File sizes, sequence numbers, compaction, trim and clear follow MMKV's rules (sections 2.9, 2.10, 3.3).
@Suite struct StoreLifecycleTests {
    func meta(_ dir: TemporaryDirectory, _ id: String = "s") throws -> MetaInfo {
        try MetaInfo(parsing: try #require(fileBytes(dir.file(id + ".crc"))))
    }

    @Test func newStoreIsOnePageWithMode0600() throws {
        let dir = TemporaryDirectory("new")
        let store = try MappedKV(id: "s", directory: dir.path + "/nested/deeper")
        #expect(try store.totalSize == 4096)
        #expect(try store.actualSize == 0)
        for name in ["s", "s.crc"] {
            var info = stat()
            #expect(stat(dir.path + "/nested/deeper/" + name, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600, "\(name) mode \(String(info.st_mode & 0o777, radix: 8))")
            #expect(info.st_size == 4096)
        }
    }

    @Test func firstInsertWritesBackAndLaterSetsAppend() throws {
        let dir = TemporaryDirectory("append")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set(Int32(1), forKey: "a")
        let first = try meta(dir)
        #expect(first.sequence == 1)
        #expect(first.version == .flag)
        #expect(first.lastConfirmedActualSize == 4, "lastConfirmed is the holder-only write-back")
        #expect(first.actualSize == 4 + 4)
        try store.set(Int32(2), forKey: "a")
        try store.set(Int32(3), forKey: "b")
        let later = try meta(dir)
        #expect(later.sequence == 1, "appends keep the sequence")
        #expect(later.actualSize == 8 + 4 + 4)
        #expect(later.lastConfirmedActualSize == 4)
    }

    @Test func growthDoublesAndEveryRewriteIncrementsTheSequence() throws {
        let dir = TemporaryDirectory("growth")
        let store = try MappedKV(id: "s", directory: dir.path)
        var sizes: [Int] = [try store.totalSize]
        var sequence = try meta(dir).sequence
        // About 60-byte records, as in docs/FORMAT.md 2.10's observation.
        let value = String(repeating: "v", count: 50)
        for i in 0..<400 {
            try store.set(value, forKey: String(format: "key-%04d", i))
            let size = try store.totalSize
            let now = try meta(dir).sequence
            if size != sizes.last! {
                #expect(size == sizes.last! * 2, "the file grows by doubling")
                #expect(now > sequence, "a resize increments the sequence")
                sizes.append(size)
            }
            sequence = now
        }
        #expect(sizes == [4096, 8192, 16384, 32768])
        #expect(FileStructure.problems(directory: dir.path, id: "s").isEmpty)
    }

    @Test func compactionDropsDeadRecordsWithoutGrowing() throws {
        let dir = TemporaryDirectory("compact")
        // 250 sets of 13-byte records per open: at most one compaction per instance, which keeps
        // MMKV's size (only repeated compactions in one instance grow the file, see below).
        var store = try MappedKV(id: "s", directory: dir.path)
        for i in 0..<5_000 {
            if i % 250 == 0 {
                store.close()
                store = try MappedKV(id: "s", directory: dir.path)
            }
            try store.set(Int32(i), forKey: "counter-\(i % 3)")
        }
        #expect(try store.totalSize == 4096, "overwrites of three keys fit in one page after compaction")
        #expect(try store.int32(forKey: "counter-2") == 4_997)
        #expect(try meta(dir).sequence > 10)
        #expect(FileStructure.problems(directory: dir.path, id: "s").isEmpty)
    }

    @Test("compactions again and again in one instance leave more room each time, up to 32 free pages")
    func repeatedCompactionsGrowTheReserve() throws {
        let dir = TemporaryDirectory("compact-hot")
        let store = try MappedKV(id: "s", directory: dir.path)
        var sizes: [Int] = []
        var sequence = try meta(dir).sequence
        for i in 0..<60_000 {
            try store.set(Int32(i), forKey: "counter-\(i % 3)")
            let now = try meta(dir).sequence
            if now != sequence {
                sizes.append(try store.totalSize)
                sequence = now
            }
        }
        // The first insert's write-back and the first compaction keep one page (MMKV's rule); then
        // 2, 4, 8, 16 and 32 pages are left free at least, each time in a file doubled as MMKV
        // doubles; at the cap the file stays.
        #expect(
            Array(sizes.prefix(8)) == [4096, 4096, 16_384, 32_768, 65_536, 131_072, 262_144, 262_144], "\(sizes)")
        #expect(Set(sizes.dropFirst(6)) == [262_144], "\(sizes)")
        #expect(try store.int32(forKey: "counter-2") == 59_999)
        #expect(FileStructure.problems(directory: dir.path, id: "s").isEmpty)
        // No reserve at an instance's first compaction; never more than 32 pages.
        #expect(
            FileSizePolicy.reserveForCompaction(after: 0, pageSize: 4096) == 0
                && FileSizePolicy.reserveForCompaction(after: 9, pageSize: 4096) == 32 * 4096)
    }

    @Test("a full region whose compaction would grow the file anyway just grows, keeping its dead records")
    func growthInsteadOfCompaction() throws {
        let dir = TemporaryDirectory("grow-not-compact")
        var store = try MappedKV(id: "s", directory: dir.path)
        let value = String(repeating: "v", count: 50)
        func key(_ i: Int) -> String { String(format: "key-%04d", i) }
        var next = 0
        // A 16 KiB file of live records, then ten of them overwritten (ten dead records).
        while try store.totalSize < 16_384 {
            try store.set(value, forKey: key(next))
            next += 1
        }
        for i in 0..<10 { try store.set(value + "!", forKey: key(i)) }
        while try store.totalSize == 16_384 {
            try store.set(value, forKey: key(next))
            next += 1
        }
        var info = try store.info()
        #expect(info.fileSize == 32_768)
        #expect(info.recordCount == info.keyCount + 10, "the dead records stay until the next compaction")
        // The same for a removal whose deletion record does not fit.
        while try store.totalSize - 4 - store.actualSize > 70 {
            try store.set(value, forKey: key(next))
            next += 1
        }
        var removed = 0
        while try store.totalSize == 32_768 {
            try store.removeValue(forKey: key(next - 1 - removed))
            removed += 1
        }
        info = try store.info()
        #expect(info.fileSize == 65_536)
        #expect(info.recordCount == info.keyCount + 10 + 2 * removed, "dead records and deletion records stay")
        #expect(FileStructure.problems(directory: dir.path, id: "s").isEmpty)
        store.close()
        store = try MappedKV(id: "s", directory: dir.path)
        #expect(try store.count == next - removed)
        #expect(try store.string(forKey: key(3)) == value + "!")
        #expect(try !store.contains(key(next - 1)))
    }

    @Test func trimShrinksAndIncrementsTheSequence() throws {
        let dir = TemporaryDirectory("trim")
        let store = try MappedKV(id: "s", directory: dir.path)
        let big = [UInt8](repeating: 7, count: 1000)
        for i in 0..<100 { try store.set(big, forKey: "big-\(i)") }
        let grown = try store.totalSize
        #expect(grown >= 128 * 1024)
        for i in 1..<100 { try store.removeValue(forKey: "big-\(i)") }
        let before = try meta(dir).sequence
        try store.trim()
        #expect(try store.totalSize == 4096)
        #expect(try meta(dir).sequence > before)
        #expect(try store.bytes(forKey: "big-0") == big)
        #expect(try store.count == 1)
        #expect(FileStructure.problems(directory: dir.path, id: "s").isEmpty)
        store.close()
        #expect(try MappedKV(id: "s", directory: dir.path).bytes(forKey: "big-0") == big)
    }

    @Test func trimKeepsWholePagesWhenTheFileGrewFromAnotherCapacity() throws {
        // A file grown from a 3-page expected capacity halves to 1.5 pages; trim rounds up to 2.
        let dir = TemporaryDirectory("trim-pages")
        let wide = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(expectedCapacity: 3 * 4096))
        try wide.set("v", forKey: "k")
        #expect(try wide.totalSize == 3 * 4096)
        wide.close()
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.trim()
        let size = try store.totalSize
        #expect(size % 4096 == 0 && size < 3 * 4096, "trim left \(size) bytes")
        #expect(try store.string(forKey: "k") == "v")
        #expect(FileStructure.problems(directory: dir.path, id: "s").isEmpty)
    }

    @Test func clearAllResetsSizeAndErasesOldRecords() throws {
        let dir = TemporaryDirectory("clear")
        let store = try MappedKV(id: "s", directory: dir.path)
        for i in 0..<300 { try store.set("secret-\(i)", forKey: "k\(i)") }
        #expect(try store.totalSize > 4096)
        let before = try meta(dir).sequence
        try store.clearAll()
        let after = try meta(dir)
        #expect(after.sequence == before + 1)
        #expect(after.actualSize == 0 && after.crcDigest == 0)
        #expect(after.lastConfirmedActualSize == 0 && after.lastConfirmedCRC == 0)
        #expect(try store.totalSize == 4096)
        #expect(try store.count == 0)
        let data = try #require(fileBytes(dir.file("s")))
        #expect(data.count == 4096)
        #expect(!String(decoding: data, as: UTF8.self).contains("secret"), "old records must not stay readable")
        try store.set("fresh", forKey: "k")
        store.close()
        let reopened = try MappedKV(id: "s", directory: dir.path)
        #expect(try contents(of: reopened) == ["k": "fresh".payloadBytes])
    }

    @Test func removeIsADeletionRecordAndAbsentKeysAreIgnored() throws {
        let dir = TemporaryDirectory("remove")
        let store = try MappedKV(id: "s", directory: dir.path)
        try store.set("x", forKey: "a")
        try store.set("y", forKey: "b")
        let size = try store.actualSize
        try store.removeValue(forKey: "missing")
        #expect(try store.actualSize == size, "removing an absent key writes nothing")
        try store.removeValue(forKey: "a")
        #expect(try store.actualSize == size + 3)
        let data = try #require(fileBytes(dir.file("s")))
        #expect(Array(data[(4 + size)..<(4 + size + 3)]) == [0x01, 0x61, 0x00])
        #expect(try store.contains("a") == false)
        #expect(try store.allKeys == ["b"])
    }

    @Test func specialCharacterIDsAreHashedLikeMMKV() throws {
        let dir = TemporaryDirectory("special")
        let store = try MappedKV(id: "a/b:c", directory: dir.path)
        try store.set(true, forKey: "k")
        // md5("a/b:c"), computed independently with Python's hashlib.
        let expected = dir.path + "/specialCharacter/42d7d68ba871aeb78a438f04d0f1f19c"
        #expect(store.location.dataPath == expected)
        #expect(FileManager.default.fileExists(atPath: expected))
        #expect(FileManager.default.fileExists(atPath: expected + ".crc"))
    }

    @Test func expectedCapacitySetsTheMinimumSize() throws {
        let dir = TemporaryDirectory("capacity")
        let store = try MappedKV(id: "s", directory: dir.path, configuration: Configuration(expectedCapacity: 10_000))
        #expect(try store.totalSize == 12_288)
        try store.set(1, forKey: "k")
        try store.clearAll()
        #expect(try store.totalSize == 12_288)
    }

    @Test func closedStoreRefusesCalls() throws {
        let dir = TemporaryDirectory("closed")
        let store = try MappedKV(id: "s", directory: dir.path)
        store.close()
        store.close()
        #expect(throws: MappedKVError.self) { try store.set(true, forKey: "k") }
        #expect(throws: MappedKVError.self) { _ = try store.bool(forKey: "k") }
    }
}
