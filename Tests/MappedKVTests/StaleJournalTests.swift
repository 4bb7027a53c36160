import Foundation
import MappedKVFormat
import Testing

@testable import MappedKV

/// A write-back journal left by a process killed before it stored its marker sequence never took
/// effect, and must never take effect later. Another process that was already open does not load
/// the files again, so it does not see the journal; if it then grows the file, the growth's
/// sequence increment can land exactly on the journal's marker, and the next load would take the
/// old journal for an interrupted write-back and roll the store back to the state it copied,
/// losing every write since. The stress harness found this as acknowledged writes that vanished
/// while their writer was still running.
@Suite struct StaleJournalTests {
    /// The journal a full write-back of the store's current state would write: same region, the
    /// sequence one higher and `lastConfirmed` at the current size and CRC.
    func journalOfCurrentState(_ dir: TemporaryDirectory) throws -> WriteBackJournal {
        let data = try #require(fileBytes(dir.file("s")))
        let meta = try MetaInfo(parsing: try #require(fileBytes(dir.file("s.crc"))))
        var written = meta
        written.sequence &+= 1
        written.lastConfirmedActualSize = meta.actualSize
        written.lastConfirmedCRC = meta.crcDigest
        return WriteBackJournal(
            base: meta.stamp, fileSize: UInt64(data.count), meta: written,
            region: Array(data[4..<(4 + Int(meta.actualSize))]))
    }

    @Test(
        "a journal whose write-back never began is not redone once a growth brings the sequence to its marker",
        arguments: [ProcessLock.flock, .sharedMemory])
    func growthOntoAStaleMarker(lock: ProcessLock) throws {
        let dir = TemporaryDirectory()
        let configuration = Configuration(isMultiProcess: true, processLock: lock)
        let writer = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        var model: [String: String] = [:]
        for i in 0..<5 {
            try writer.set("first-\(i)", forKey: "k\(i)")
            model["k\(i)"] = "first-\(i)"
        }
        // A process killed between writing its journal and storing the marker leaves this behind.
        let journal = try journalOfCurrentState(dir)
        try writeFile(dir.file("s.writeback"), journal.serialized)

        // The writer, open all along, appends distinct keys until the file grows once: a growth
        // without compaction (every record is live), which increments the sequence by one.
        let startSize = try #require(fileBytes(dir.file("s"))).count
        var next = 5
        while try #require(fileBytes(dir.file("s"))).count == startSize {
            try writer.set(String(repeating: "x", count: 40), forKey: "k\(next)")
            model["k\(next)"] = String(repeating: "x", count: 40)
            next += 1
            try #require(next < 100_000, "the file never grew")
        }
        let grown = try MetaInfo(parsing: try #require(fileBytes(dir.file("s.crc"))))
        #expect(grown.sequence == journal.markerSequence, "the scenario needs the growth to reach the marker")
        let journalPath = dir.file("s.writeback")
        #expect(!FileManager.default.fileExists(atPath: journalPath), "the growth deletes the stale journal")
        for i in next..<(next + 3) {
            try writer.set("after-\(i)", forKey: "k\(i)")
            model["k\(i)"] = "after-\(i)"
        }

        // The next load (here a reopen; in the stress run, another process's) must see every write.
        writer.close()
        let reader = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        defer { reader.close() }
        for (key, value) in model {
            #expect(try reader.string(forKey: key) == value, "\(key) after the reader's load")
        }
        #expect(try reader.count == model.count)
    }

    @Test(
        "a journal whose write-back never began is not redone when another writer brings the sequence to its marker",
        arguments: [ProcessLock.flock, .sharedMemory])
    func foreignIncrementOntoAStaleMarker(lock: ProcessLock) throws {
        let dir = TemporaryDirectory()
        let configuration = Configuration(isMultiProcess: true, processLock: lock)
        var model: [String: String] = [:]
        let writer = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        for i in 0..<5 {
            try writer.set("first-\(i)", forKey: "k\(i)")
            model["k\(i)"] = "first-\(i)"
        }
        let journal = try journalOfCurrentState(dir)
        try writeFile(dir.file("s.writeback"), journal.serialized)
        for i in 5..<20 {
            try writer.set("later-\(i)", forKey: "k\(i)")
            model["k\(i)"] = "later-\(i)"
        }
        writer.close()
        // Another writer (an MMKV process, say, which knows nothing of journals) increments the
        // sequence: it lands on the stale journal's marker.
        var meta = try #require(fileBytes(dir.file("s.crc")))
        meta.withUnsafeMutableBytes {
            $0.storeBytes(
                of: journal.markerSequence.littleEndian, toByteOffset: MetaInfo.Offset.sequence, as: UInt32.self)
        }
        try writeFile(dir.file("s.crc"), meta)

        let reader = try MappedKV(id: "s", directory: dir.path, configuration: configuration)
        defer { reader.close() }
        for (key, value) in model {
            #expect(try reader.string(forKey: key) == value, "\(key) after the reader's load")
        }
        #expect(try reader.count == model.count)
        #expect(!FileManager.default.fileExists(atPath: dir.file("s.writeback")), "the load deletes the stale journal")
    }
}
