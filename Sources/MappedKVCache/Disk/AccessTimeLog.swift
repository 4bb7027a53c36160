import MappedKV
import MappedKVFormat

/// Access times noticed by this process and not yet written to the manifest.
///
/// A read records its key's time here; the times are written (under one exclusive lock) once
/// ``DiskCacheConfiguration/accessTimeFlushInterval`` has passed since the last write, so the
/// LRU order the manifest holds is at most that much behind this process's reads.
struct AccessTimeLog: ~Copyable {
    /// Accesses in the order they happened, already in the encoding of an ``AccessTimeBatch``
    /// (`varint(key length) key varint(time)` each), in `bytes[0..<count]` of a buffer this log
    /// owns: a read writes its key's bytes and its time in place, keeps no string and leaves
    /// nothing to encode when the log is written. (A log of strings and times, and appending the
    /// encoding to an array, both cost each read more: the cache bench's disk_get.) A key may
    /// appear more than once; the latest time wins. Entries that
    /// were set, removed or replaced since need no forgetting: an entry's LRU time is the later of
    /// its modification and its access, and a time for a key with no entry is never written.
    private var bytes: UnsafeMutableRawPointer
    private var count = 0
    private var capacity: Int
    /// When the pending times were last written.
    var lastFlush: UInt64

    /// How many bytes of accesses are kept before they are written regardless of the interval
    /// (about 65,000 accesses of 8-byte keys).
    static let limit = 1 << 20

    init(lastFlush: UInt64) {
        self.lastFlush = lastFlush
        capacity = 4_096
        bytes = .allocate(byteCount: capacity, alignment: 1)
    }

    deinit { bytes.deallocate() }

    /// The pending accesses, as a batch's encoding.
    private var encoded: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bytes, count: count) }

    /// The latest pending access time per key.
    var pending: [String: UInt64] {
        var latest: [String: UInt64] = [:]
        AccessTimeBatch.decodeEntries(encoded) { key, time in latest[key] = max(latest[key] ?? 0, time) }
        return latest
    }

    mutating func forgetAll() { count = 0 }

    /// Records an access; returns the accesses to write now (a batch's encoding), if the interval
    /// has passed or the log is full.
    mutating func note(_ key: String, at now: UInt64, interval: UInt64) -> [UInt8]? {
        // Read in place where the string allows it, with no copy of the string to retain.
        if key.utf8.withContiguousStorageIfAvailable({ append(key: UnsafeRawBufferPointer($0)) }) == nil {
            var key = key
            key.withUTF8 { append(key: UnsafeRawBufferPointer($0)) }
        }
        count += Varint.write(now, to: bytes + count)
        let (due, overflow) = lastFlush.addingReportingOverflow(interval)
        // An interval past the end of time: written only when full, on trim or on close.
        guard count >= Self.limit || (!overflow && now >= due) else { return nil }
        return takeAll(now: now)
    }

    /// Every pending access, in order, as a batch's encoding (a key may repeat; the latest time
    /// wins); they are no longer pending.
    mutating func takeAll(now: UInt64) -> [UInt8] {
        lastFlush = now
        let taken = Array(encoded)
        count = 0
        return taken
    }

    /// Appends a key's length and bytes, with room for the time after them.
    private mutating func append(key utf8: UnsafeRawBufferPointer) {
        // At most 10 bytes for each varint.
        reserve(utf8.count + 20)
        count += Varint.write(UInt64(utf8.count), to: bytes + count)
        if let source = utf8.baseAddress { (bytes + count).copyMemory(from: source, byteCount: utf8.count) }
        count += utf8.count
    }

    /// Makes room for `more` bytes after the pending ones.
    private mutating func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        let grown = max(capacity * 2, count + more)
        let moved = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 1)
        moved.copyMemory(from: bytes, byteCount: count)
        bytes.deallocate()
        bytes = moved
        capacity = grown
    }
}

extension DiskCache {
    /// Records an access to `key` at `now`, writing the coalesced times when they are due.
    func noteAccess(_ key: String, at now: UInt64) {
        let interval = accessTimeFlushMilliseconds
        guard let due = accessTimes.withLock({ $0.note(key, at: now, interval: interval) }) else { return }
        do { try write(accessTimes: due) } catch {
            logger.debug("could not write access times", metadata: ["error": "\(error)"])
        }
    }

    /// Writes the access times this process has noticed to the manifest now.
    public func flushAccessTimes() throws(CacheError) {
        let now = clock.now()
        let due = accessTimes.withLock { $0.takeAll(now: now) }
        try write(accessTimes: due)
    }

    /// Writes `due` as one batch record (`t:<random>`): one manifest write per flush, however many
    /// keys were read. Every ``batchLimit`` batches, the batches are merged into one.
    private func write(accessTimes batch: [UInt8]) throws(CacheError) {
        guard !batch.isEmpty else { return }
        try exclusively { transaction in
            try transaction.set(batch, forKey: AccessTimeBatch.key(FileNames.random()))
            let count = (try transaction.value(forKey: AccessTimeBatch.countKey, as: UInt64.self) ?? 0) + 1
            guard count >= AccessTimeBatch.batchLimit else {
                return try transaction.set(count, forKey: AccessTimeBatch.countKey)
            }
            try Self.mergeAccessTimeBatches(transaction)
        }
    }

    /// Replaces every batch with one holding the latest time of each key that still has an entry.
    static func mergeAccessTimeBatches(_ transaction: MappedKV.Transaction) throws {
        var latest: [String: UInt64] = [:]
        var batchKeys: [String] = []
        var live = Set<String>()
        try transaction.forEachEntry { storeKey, payload in
            if storeKey.hasPrefix(AccessTimeBatch.prefix) {
                batchKeys.append(storeKey)
                AccessTimeBatch.decode(payload) { key, time in latest[key] = max(latest[key] ?? 0, time) }
            } else if storeKey.hasPrefix("e:") {
                live.insert(String(storeKey.dropFirst(2)))
            }
        }
        for key in batchKeys { try transaction.removeValue(forKey: key) }
        let kept = latest.filter { live.contains($0.key) }
        if !kept.isEmpty {
            let merged = kept.map { (key: $0.key, time: $0.value) }
            try transaction.set(AccessTimeBatch.encode(merged), forKey: AccessTimeBatch.key(FileNames.random()))
        }
        try transaction.set(UInt64(kept.isEmpty ? 0 : 1), forKey: AccessTimeBatch.countKey)
    }
}

/// Access times written as batches: the payload of `t:<32 hex>` is a sequence of
/// `varint(key length) key varint(milliseconds since 1970)`, in which a key may repeat (the latest
/// time wins); `c:batches` counts the batches written since the last merge.
enum AccessTimeBatch {
    static let prefix = "t:"
    static let countKey = "c:batches"
    /// How many batches are written before they are merged into one.
    static let batchLimit: UInt64 = 16

    static func key(_ name: String) -> String { prefix + name }

    static func encode(_ times: [(key: String, time: UInt64)]) -> [UInt8] {
        // Measured first, then written in place: appending field by field costs each access more
        // (the cache bench's disk_get).
        var length = 0
        for (key, time) in times {
            let count = key.utf8.count
            length += Varint.size(of: UInt64(count)) + count + Varint.size(of: time)
        }
        return [UInt8](unsafeUninitializedCapacity: length) { buffer, written in
            guard let base = buffer.baseAddress else { return }
            var position = 0
            for (key, time) in times {
                var key = key
                key.withUTF8 { utf8 in
                    position += Varint.write(UInt64(utf8.count), to: base + position)
                    if let source = utf8.baseAddress { (base + position).update(from: source, count: utf8.count) }
                    position += utf8.count
                }
                position += Varint.write(time, to: base + position)
            }
            written = position
        }
    }

    /// Calls `body` for every key and time in a batch's stored payload (a bytes payload); stops at
    /// the first malformed entry.
    static func decode(_ payload: UnsafeRawBufferPointer, _ body: (String, UInt64) -> Void) {
        var cursor = ByteCursor(payload)
        guard let length = try? cursor.readVarint64(), length == UInt64(cursor.remaining) else { return }
        decodeEntries(UnsafeRawBufferPointer(rebasing: payload[cursor.position...]), body)
    }

    /// Calls `body` for every key and time in a batch's encoding (without the payload's length);
    /// stops at the first malformed entry.
    static func decodeEntries(_ entries: UnsafeRawBufferPointer, _ body: (String, UInt64) -> Void) {
        var cursor = ByteCursor(entries)
        while !cursor.isAtEnd {
            guard let keyLength = try? cursor.readVarint64(), keyLength <= UInt64(cursor.remaining) else { return }
            let start = cursor.position
            cursor.position += Int(keyLength)
            guard let time = try? cursor.readVarint64() else { return }
            body(String(decoding: entries[start..<(start + Int(keyLength))], as: UTF8.self), time)
        }
    }
}
