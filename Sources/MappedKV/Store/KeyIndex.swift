import MappedKVIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The live keys of a store: an open-addressing hash table whose buckets hold, in 8 bytes, where a
/// key's latest record starts in the plaintext mirror and 31 bits of the key's hash.
///
/// Linear probing over a power-of-two table at most three quarters full; a probe compares key
/// bytes only when the hash bits match, and growing never rehashes a key. A key's home bucket is
/// the top bits of its hash, so buckets in hash order are buckets in table order: a load sorts
/// its records by hash and fills the table front to back (KeyIndex+Decoding.swift). Removal shifts the
/// following entries back (no tombstones), so lookups stay short however many keys come and go.
///
/// A bucket keeps no lengths: the record's header in the mirror says them (two varints read from
/// the cache line the key comparison loads anyway), so a ``ValueSlot`` is decoded when it is
/// asked for. Eight-byte buckets keep the table of a million keys at 16 MiB, inside the
/// processor's last-level cache, where 20-byte buckets needed 40 MiB of main memory.
///
/// Every call that reads slots takes the mirror the records are in; the caller keeps the two in
/// step (a bucket's record must be in the mirror it passes, decoded when it was filed).
struct KeyIndex {
    /// One bucket: 31 bits of its key's hash with the repaired-key flag on top, and where the
    /// record starts plus one; empty when that is zero (all zero bytes).
    struct Entry {
        var tag: UInt32
        var location: UInt32

        /// All zero bytes, which is how ``KeyIndex`` initializes its buckets.
        static let empty = Entry(tag: 0, location: 0)

        /// A bucket for the record of `slot`, whose key hashes to `hash` (31 bits).
        init(hash: UInt32, slot: ValueSlot) {
            tag = hash | (slot.keyIsRepaired ? KeyIndex.repairedFlag : 0)
            location = UInt32(truncatingIfNeeded: slot.recordStart + 1)
        }

        init(tag: UInt32, location: UInt32) {
            self.tag = tag
            self.location = location
        }

        var isEmpty: Bool { location == 0 }
        /// The 31 hash bits.
        var hash: UInt32 { tag & KeyIndex.hashMask }
        var isRepaired: Bool { tag & KeyIndex.repairedFlag != 0 }
        var recordStart: Int { Int(location) - 1 }
    }

    /// The tag bit that marks a key that is not UTF-8 (filed under its repair).
    static let repairedFlag: UInt32 = 0x8000_0000
    /// The tag bits that are the hash.
    static let hashMask: UInt32 = 0x7FFF_FFFF

    /// The buckets; empty, or a power of two of them (read by the walks in KeyIndex+Walks.swift).
    private(set) var entries: [Entry] = []
    /// How far a hash is shifted right to give its home bucket: 31 minus log2 of the bucket count
    /// (set wherever ``entries`` is replaced).
    private var homeShift: UInt32 = 31
    /// The number of keys.
    private(set) var count = 0
    /// How many of the keys are not UTF-8 (``ValueSlot/keyIsRepaired``).
    private(set) var repairedCount = 0
    /// The bytes of the live records (header, key and value of each slot), for telling whether a
    /// region holds dead records.
    private(set) var recordBytes = 0
    /// Hashes keys for this table (its seed is this table's own).
    let hasher: KeyHasher
    /// The sum of what ``touchHomes(of:)`` or ``touchRecords(ofHashes:in:)`` last read; nothing
    /// reads it (it is stored so that the compiler keeps the reads).
    var touchedSum: UInt32 = 0

    /// An empty index with room for `minimumCapacity` keys before it grows.
    init(minimumCapacity: Int = 0, hasher: KeyHasher = KeyHasher()) {
        self.hasher = hasher
        if minimumCapacity > 0 {
            entries = Self.emptyBuckets(Self.bucketCount(for: minimumCapacity))
            homeShift = Self.homeShift(bucketCount: entries.count)
        }
    }

    /// An index over `buckets` as an index file stored them (docs/FORMAT.md 12), filed with the
    /// hash of `hasher`; the caller has checked that the counts are the buckets' own.
    init(restoring buckets: [Entry], hasher: KeyHasher, count: Int, repairedCount: Int, recordBytes: Int) {
        self.hasher = hasher
        entries = buckets
        homeShift = Self.homeShift(bucketCount: buckets.count)
        self.count = count
        self.repairedCount = repairedCount
        self.recordBytes = recordBytes
    }

    /// The shift that maps 31-bit hashes onto `bucketCount` buckets (a power of two).
    private static func homeShift(bucketCount: Int) -> UInt32 {
        bucketCount > 1 ? 31 - UInt32(truncatingIfNeeded: bucketCount.trailingZeroBitCount) : 31
    }

    /// The bucket where the probe for `hash` starts: its top bits.
    @inline(__always)
    func home(_ hash: UInt32) -> Int {
        Int(truncatingIfNeeded: hash &>> homeShift)
    }

    /// Whether the index holds no keys.
    var isEmpty: Bool { count == 0 }

    /// The number of keys the index holds before it next grows.
    var capacity: Int { entries.count / 4 * 3 }

    /// The smallest power-of-two bucket count that holds `keys` at most three quarters full.
    private static func bucketCount(for keys: Int) -> Int {
        var buckets = 16
        while buckets / 4 * 3 < keys { buckets *= 2 }
        return buckets
    }

    /// The 31 bits of the hash of `key` that the table uses.
    @inline(__always)
    func hash(_ key: UnsafeRawBufferPointer) -> UInt32 {
        let full = hasher.hash(key)
        return UInt32(truncatingIfNeeded: full ^ (full >> 32)) & Self.hashMask
    }

    /// The bucket of `key`, or nil if it is absent.
    @inline(__always)
    private func bucket(of key: UnsafeRawBufferPointer, hash: UInt32, in mirror: UnsafeRawBufferPointer) -> Int? {
        let (position, found) = probe(for: key, hash: hash, in: mirror)
        return found ? position : nil
    }

    /// Where the probe for `key` ended: its bucket (found), or the empty bucket that ended the
    /// search, where the key would go if the table needs no growth first (-1 for a table with
    /// no buckets, or an empty key).
    @inline(__always)
    private func probe(
        for key: UnsafeRawBufferPointer, hash: UInt32, in mirror: UnsafeRawBufferPointer
    ) -> (position: Int, found: Bool) {
        entries.withUnsafeBufferPointer { buckets in
            Self.probe(buckets, from: home(hash), for: key, hash: hash, in: mirror)
        }
    }

    /// The bucket of the key that is not UTF-8 and whose repair is `key`, or nil (the rare path).
    private func repairedBucket(of key: UnsafeRawBufferPointer, hash: UInt32, in mirror: UnsafeRawBufferPointer) -> Int?
    {
        let mask = entries.count - 1
        var position = home(hash)
        while !entries[position].isEmpty {
            let entry = entries[position]
            if entry.tag == hash | Self.repairedFlag, let slot = Self.slot(of: entry, in: mirror),
                Self.repairedKey(slot, in: mirror).elementsEqual(key)
            {
                return position
            }
            position = (position + 1) & mask
        }
        return nil
    }

    /// The hash the table files `slot` under: of its key bytes in `mirror`, or of their repair.
    func hash(of slot: ValueSlot, in mirror: UnsafeRawBufferPointer) -> UInt32 {
        guard slot.keyIsRepaired else { return hash(UnsafeRawBufferPointer(rebasing: mirror[slot.keyRange])) }
        return Self.repairedKey(slot, in: mirror).withUnsafeBytes { hash($0) }
    }

    /// The UTF-8 repair of a slot's key bytes (for a key that is not UTF-8).
    private static func repairedKey(_ slot: ValueSlot, in mirror: UnsafeRawBufferPointer) -> [UInt8] {
        Array(String(decoding: mirror[slot.keyRange], as: UTF8.self).utf8)
    }

    /// The slot of `key` (its UTF-8 bytes), or nil if it is absent.
    @inline(__always)
    func slot(for key: UnsafeRawBufferPointer, in mirror: UnsafeRawBufferPointer) -> ValueSlot? {
        slot(for: key, hash: hash(key), in: mirror)
    }
    /// ``slot(for:in:)`` of a key whose ``hash(_:)`` is known.
    @inline(__always)
    func slot(for key: UnsafeRawBufferPointer, hash: UInt32, in mirror: UnsafeRawBufferPointer) -> ValueSlot? {
        guard count > 0, let position = bucket(of: key, hash: hash, in: mirror) else { return nil }
        return Self.slot(of: entries[position], in: mirror)
    }

    /// ``slot(for:in:)`` among the keys that are not UTF-8: for the caller to try after a miss
    /// when ``repairedCount`` is not zero. Kept apart so that the common lookup makes no call.
    func repairedSlot(for key: UnsafeRawBufferPointer, in mirror: UnsafeRawBufferPointer) -> ValueSlot? {
        guard repairedCount > 0, let position = repairedBucket(of: key, hash: hash(key), in: mirror) else { return nil }
        return Self.slot(of: entries[position], in: mirror)
    }

    /// Makes `slot` the record of its key (the bytes at `slot.keyRange` of `mirror`, which holds
    /// the record it replaces too); returns the slot it replaced, or nil if the key is new.
    @discardableResult
    mutating func update(_ slot: ValueSlot, in mirror: UnsafeRawBufferPointer) -> ValueSlot? {
        if slot.keyIsRepaired {
            return Self.repairedKey(slot, in: mirror).withUnsafeBytes { update(slot, key: $0, in: mirror) }
        }
        return update(slot, key: UnsafeRawBufferPointer(rebasing: mirror[slot.keyRange]), in: mirror)
    }

    /// Makes `slot` the record of `key` (its bytes, or their repair for a slot marked so).
    @inline(__always)
    private mutating func update(
        _ slot: ValueSlot, key: UnsafeRawBufferPointer, in mirror: UnsafeRawBufferPointer
    ) -> ValueSlot? {
        update(slot, key: key, hash: hash(key), in: mirror)
    }

    /// Makes `slot` the record of `key`, whose hash is `keyHash`.
    @inline(__always)
    mutating func update(
        _ slot: ValueSlot, key: UnsafeRawBufferPointer, hash keyHash: UInt32, in mirror: UnsafeRawBufferPointer
    ) -> ValueSlot? {
        let (position, found) = probe(for: key, hash: keyHash, in: mirror)
        let existing = found ? position : (repairedCount > 0 ? repairedBucket(of: key, hash: keyHash, in: mirror) : nil)
        if let existing {
            let oldEntry = entries[existing]
            let old = Self.slot(of: oldEntry, in: mirror)
            entries[existing] = Entry(hash: keyHash, slot: slot)
            recordBytes += slot.recordRange.count - (old?.recordRange.count ?? 0)
            repairedCount += (slot.keyIsRepaired ? 1 : 0) - (oldEntry.isRepaired ? 1 : 0)
            return old
        }
        insertNew(slot, hash: keyHash, vacancy: position)
        return nil
    }

    /// Adds `slot` for a key known to be absent, with its precomputed hash. `vacancy`, if not
    /// negative, is the empty bucket where the key's probe ended, used unless the table must grow.
    @inline(__always)
    mutating func insertNew(_ slot: ValueSlot, hash: UInt32, vacancy: Int = -1) {
        var position = vacancy
        if vacancy < 0 || count >= capacity {
            if count >= capacity { grow(to: Self.bucketCount(for: count + 1)) }
            let mask = entries.count - 1
            position = home(hash)
            while !entries[position].isEmpty { position = (position + 1) & mask }
        }
        entries[position] = Entry(hash: hash, slot: slot)
        count += 1
        recordBytes += slot.recordRange.count
        if slot.keyIsRepaired { repairedCount += 1 }
    }

    /// Makes each of `newRecords` records the record of its key, in order (a later record of the
    /// same key wins), as ``update(_:key:hash:in:)`` one by one would, but growing the table at
    /// most once, first, and writing the buckets through one pointer (no check per bucket that
    /// the array is not shared). `record(i)` gives the `i`th record's slot, its key's bytes in
    /// `mirror` and the key's hash; the records are sets of UTF-8 keys, all in `mirror`.
    @inline(__always)
    mutating func fileRecords(
        count newRecords: Int, in mirror: UnsafeRawBufferPointer,
        _ record: (Int) -> (slot: ValueSlot, key: UnsafeRawBufferPointer, hash: UInt32)
    ) {
        // Keys that are not UTF-8 need the lookup among repaired keys: the general path.
        guard repairedCount == 0 else {
            for position in 0..<newRecords {
                let (slot, key, hash) = record(position)
                _ = update(slot, key: key, hash: hash, in: mirror)
            }
            return
        }
        // Room for every record as a new key, so that nothing grows while the buckets are written.
        if count + newRecords > capacity { grow(to: Self.bucketCount(for: count + newRecords)) }
        let shift = homeShift
        var added = 0
        var addedBytes = 0
        entries.withUnsafeMutableBufferPointer { buckets in
            let readable = UnsafeBufferPointer(buckets)
            for position in 0..<newRecords {
                let (slot, key, hash) = record(position)
                let home = Int(truncatingIfNeeded: hash &>> shift)
                let (bucket, found) = Self.probe(readable, from: home, for: key, hash: hash, in: mirror)
                if found {
                    addedBytes -= Self.slot(of: buckets[bucket], in: mirror)?.recordRange.count ?? 0
                } else {
                    added += 1
                }
                buckets[bucket] = Entry(hash: hash, slot: slot)
                addedBytes += slot.recordRange.count
            }
        }
        count += added
        recordBytes += addedBytes
    }

    /// Removes `key` (its UTF-8 bytes); returns its slot, or nil if it was absent.
    @discardableResult
    mutating func remove(_ key: UnsafeRawBufferPointer, in mirror: UnsafeRawBufferPointer) -> ValueSlot? {
        remove(key, hash: hash(key), in: mirror)
    }

    /// Removes `key`, whose hash is `keyHash`; returns its slot, or nil if it was absent.
    @discardableResult
    mutating func remove(
        _ key: UnsafeRawBufferPointer, hash keyHash: UInt32, in mirror: UnsafeRawBufferPointer
    ) -> ValueSlot? {
        guard count > 0,
            let position = bucket(of: key, hash: keyHash, in: mirror)
                ?? (repairedCount > 0 ? repairedBucket(of: key, hash: keyHash, in: mirror) : nil)
        else { return nil }
        let removedEntry = entries[position]
        let removed = Self.slot(of: removedEntry, in: mirror)
        let shift = homeShift
        // Backward-shift deletion: move each following entry of the run into the hole if the
        // hole lies between its home bucket and where it sits. Unchecked, one uniqueness check:
        // positions are masked to the table.
        entries.withUnsafeMutableBufferPointer { entries in
            let mask = entries.count &- 1
            var hole = position
            var next = position
            while true {
                next = (next &+ 1) & mask
                let entry = entries[next]
                if entry.isEmpty { break }
                let home = Int(truncatingIfNeeded: entry.hash &>> shift)
                let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
                if stays { continue }
                entries[hole] = entry
                hole = next
            }
            entries[hole] = .empty
        }
        count -= 1
        recordBytes -= removed?.recordRange.count ?? 0
        if removedEntry.isRepaired { repairedCount -= 1 }
        return removed
    }

    /// Removes the key of `slot` (a slot of this index, with its key bytes in `mirror`).
    @discardableResult
    mutating func remove(keyOf slot: ValueSlot, in mirror: UnsafeRawBufferPointer) -> ValueSlot? {
        guard slot.keyIsRepaired else {
            return remove(UnsafeRawBufferPointer(rebasing: mirror[slot.keyRange]), in: mirror)
        }
        return Self.repairedKey(slot, in: mirror).withUnsafeBytes { remove($0, in: mirror) }
    }

    /// Removes every key.
    mutating func removeAll() {
        entries = []
        homeShift = 31
        count = 0
        recordBytes = 0
        repairedCount = 0
    }

    /// `count` empty buckets; a table of several megabytes asks for huge pages first.
    private static func emptyBuckets(_ count: Int) -> [Entry] {
        [Entry](unsafeUninitializedCapacity: count) { buffer, initialized in
            let bytes = UnsafeMutableRawBufferPointer(buffer)
            if bytes.count >= 2 * MemoryAdvice.hugePageSize { MemoryAdvice.preferHugePages(bytes) }
            // An empty entry is all zero bytes (the type is trivial), so one memset initializes them all.
            if let base = bytes.baseAddress { memset(base, 0, bytes.count) }
            initialized = count
        }
    }

    /// Fills this empty index with the records of distinct keys, each given as its 31 hash bits
    /// above bit 33 and where it starts in the low 32 bits, in ascending hash order: each bucket
    /// lies at or after the one before, so the table is written front to back.
    ///
    /// - Parameters:
    ///   - records: The records, one per key, none a deletion, sorted by hash.
    ///   - repairedStarts: Where the records of keys that are not UTF-8 start (among others).
    ///   - recordBytes: The bytes of the records.
    mutating func fill(hashOrdered records: [UInt64], repairedStarts: Set<UInt32>, recordBytes: Int) {
        precondition(isEmpty, "KeyIndex.fill needs an empty index")
        guard !records.isEmpty else { return }
        let bucketCount = Self.bucketCount(for: Swift.max(records.count, capacity))
        entries = Self.emptyBuckets(bucketCount)
        homeShift = Self.homeShift(bucketCount: bucketCount)
        let mask = bucketCount - 1
        let shift = homeShift
        var repaired = 0
        entries.withUnsafeMutableBufferPointer { buckets in
            for record in records {
                let hash = UInt32(truncatingIfNeeded: record &>> 33) & Self.hashMask
                let start = UInt32(truncatingIfNeeded: record)
                var tag = hash
                if !repairedStarts.isEmpty, repairedStarts.contains(start) {
                    tag |= Self.repairedFlag
                    repaired += 1
                }
                var position = Int(truncatingIfNeeded: hash &>> shift)
                while !buckets[position].isEmpty { position = (position + 1) & mask }
                buckets[position] = Entry(tag: tag, location: UInt32(truncatingIfNeeded: Int(start) + 1))
            }
        }
        count = records.count
        repairedCount = repaired
        self.recordBytes = recordBytes
    }

    /// Rehashes into `bucketCount` buckets, from the stored hashes.
    private mutating func grow(to bucketCount: Int) {
        let old = entries
        entries = Self.emptyBuckets(bucketCount)
        homeShift = Self.homeShift(bucketCount: bucketCount)
        let mask = bucketCount - 1
        let shift = homeShift
        entries.withUnsafeMutableBufferPointer { buckets in
            for entry in old where !entry.isEmpty {
                var position = Int(truncatingIfNeeded: entry.hash &>> shift)
                while !buckets[position].isEmpty { position = (position + 1) & mask }
                buckets[position] = entry
            }
        }
    }

    /// Moves every record: `newStart(start)` is where the record now at `start` begins after
    /// the move (the same key's record, its bytes unchanged).
    mutating func relocateRecords(_ newStart: (Int) -> Int) {
        entries.withUnsafeMutableBufferPointer { buckets in
            for position in buckets.indices where !buckets[position].isEmpty {
                let start = newStart(buckets[position].recordStart)
                buckets[position].location = UInt32(truncatingIfNeeded: start + 1)
            }
        }
    }
}
