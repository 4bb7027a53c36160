import MappedKVIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The live keys of a store: an open-addressing hash table of ``ValueSlot``s whose keys are byte
/// ranges of the plaintext mirror.
///
/// Linear probing over a power-of-two table at most three quarters full; each entry keeps 32 bits
/// of its key's hash, so a probe compares key bytes only when those bits match, and growing never
/// rehashes a key. Removal shifts the following entries back (no tombstones), so lookups stay
/// short however many keys come and go.
///
/// Every call that compares keys takes the mirror the slots point into; the caller keeps the two
/// in step (a slot's key bytes must be in the mirror it passes).
struct KeyIndex {
    /// One bucket: a slot and its key's hash; empty when the slot's key length is zero.
    struct Entry {
        var hash: UInt32
        var slot: ValueSlot

        /// All zero bytes, which is how ``KeyIndex`` initializes its buckets.
        static let empty = Entry(
            hash: 0, slot: ValueSlot(keyStart: 0, valueStart: 0, valueLength: 0, keyLength: 0, keyOffset: 0))

        var isEmpty: Bool { slot.keyLength == 0 }
    }

    /// The buckets; empty, or a power of two of them.
    private var entries: [Entry] = []
    /// The number of keys.
    private(set) var count = 0
    /// How many of the keys are not UTF-8 (``ValueSlot/keyIsRepaired``).
    private(set) var repairedCount = 0
    /// The bytes of the live records (header, key and value of each slot), for telling whether a
    /// region holds dead records.
    private(set) var recordBytes = 0
    /// Hashes keys for this table (its seed is this table's own).
    let hasher: KeyHasher

    /// An empty index with room for `minimumCapacity` keys before it grows.
    init(minimumCapacity: Int = 0, hasher: KeyHasher = KeyHasher()) {
        self.hasher = hasher
        if minimumCapacity > 0 { entries = Self.emptyBuckets(Self.bucketCount(for: minimumCapacity)) }
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

    /// The 32 bits of the hash of `key` that the table uses.
    @inline(__always)
    func hash(_ key: UnsafeRawBufferPointer) -> UInt32 {
        let full = hasher.hash(key)
        return UInt32(truncatingIfNeeded: full ^ (full >> 32))
    }

    /// The bucket of `key`, or nil if it is absent.
    @inline(__always)
    private func bucket(of key: UnsafeRawBufferPointer, hash: UInt32, in mirror: UnsafeRawBufferPointer) -> Int? {
        guard !entries.isEmpty, let keyBase = key.baseAddress, let mirrorBase = mirror.baseAddress else { return nil }
        let mask = entries.count - 1
        var position = Int(hash) & mask
        // A key that is not UTF-8 never equals the bytes looked up (they are its repair, which
        // differs), so this loop needs no test for such keys; ``slot(for:in:)`` and the others
        // look among them only after a miss, and only when the table holds any.
        while true {
            let entry = entries[position]
            if entry.isEmpty { break }
            if entry.hash == hash, Int(entry.slot.keyLength) == key.count,
                Int(entry.slot.keyStart) + key.count <= mirror.count,
                memcmp(mirrorBase + Int(entry.slot.keyStart), keyBase, key.count) == 0
            {
                return position
            }
            position = (position + 1) & mask
        }
        return nil
    }

    /// The bucket of the key that is not UTF-8 and whose repair is `key`, or nil (the rare path).
    private func repairedBucket(of key: UnsafeRawBufferPointer, hash: UInt32, in mirror: UnsafeRawBufferPointer) -> Int?
    {
        let mask = entries.count - 1
        var position = Int(hash) & mask
        while !entries[position].isEmpty {
            let entry = entries[position]
            if entry.hash == hash, entry.slot.keyIsRepaired, Self.repairedKey(entry.slot, in: mirror).elementsEqual(key)
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
        guard count > 0, let position = bucket(of: key, hash: hash(key), in: mirror) else { return nil }
        return entries[position].slot
    }

    /// ``slot(for:in:)`` among the keys that are not UTF-8: for the caller to try after a miss
    /// when ``repairedCount`` is not zero. Kept apart so that the common lookup makes no call.
    func repairedSlot(for key: UnsafeRawBufferPointer, in mirror: UnsafeRawBufferPointer) -> ValueSlot? {
        guard repairedCount > 0, let position = repairedBucket(of: key, hash: hash(key), in: mirror) else { return nil }
        return entries[position].slot
    }

    /// Makes `slot` the record of its key (the bytes at `slot.keyRange` of `mirror`); returns the
    /// slot it replaced, or nil if the key is new.
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
        let keyHash = hash(key)
        if let position = bucket(of: key, hash: keyHash, in: mirror)
            ?? (repairedCount > 0 ? repairedBucket(of: key, hash: keyHash, in: mirror) : nil)
        {
            let old = entries[position].slot
            entries[position].slot = slot
            recordBytes += slot.recordRange.count - old.recordRange.count
            repairedCount += (slot.keyIsRepaired ? 1 : 0) - (old.keyIsRepaired ? 1 : 0)
            return old
        }
        insertNew(slot, hash: keyHash)
        return nil
    }

    /// Adds `slot` for a key known to be absent, with its precomputed hash.
    @inline(__always)
    mutating func insertNew(_ slot: ValueSlot, hash: UInt32) {
        if count >= capacity { grow(to: Self.bucketCount(for: count + 1)) }
        let mask = entries.count - 1
        var position = Int(hash) & mask
        while !entries[position].isEmpty { position = (position + 1) & mask }
        entries[position] = Entry(hash: hash, slot: slot)
        count += 1
        recordBytes += slot.recordRange.count
        if slot.keyIsRepaired { repairedCount += 1 }
    }

    /// Removes `key` (its UTF-8 bytes); returns its slot, or nil if it was absent.
    @discardableResult
    mutating func remove(_ key: UnsafeRawBufferPointer, in mirror: UnsafeRawBufferPointer) -> ValueSlot? {
        let keyHash = hash(key)
        guard count > 0,
            let position = bucket(of: key, hash: keyHash, in: mirror)
                ?? (repairedCount > 0 ? repairedBucket(of: key, hash: keyHash, in: mirror) : nil)
        else { return nil }
        let removed = entries[position].slot
        // Backward-shift deletion: move each following entry of the run into the hole if the
        // hole lies between its home bucket and where it sits.
        let mask = entries.count - 1
        var hole = position
        var next = position
        while true {
            next = (next + 1) & mask
            let entry = entries[next]
            if entry.isEmpty { break }
            let home = Int(entry.hash) & mask
            let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if stays { continue }
            entries[hole] = entry
            hole = next
        }
        entries[hole] = .empty
        count -= 1
        recordBytes -= removed.recordRange.count
        if removed.keyIsRepaired { repairedCount -= 1 }
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

    /// Rehashes into `bucketCount` buckets, from the stored hashes.
    private mutating func grow(to bucketCount: Int) {
        let old = entries
        entries = Self.emptyBuckets(bucketCount)
        let mask = bucketCount - 1
        entries.withUnsafeMutableBufferPointer { buckets in
            for entry in old where !entry.isEmpty {
                var position = Int(entry.hash) & mask
                while !buckets[position].isEmpty { position = (position + 1) & mask }
                buckets[position] = entry
            }
        }
    }

    /// Replaces every slot with `body(slot)`, which must be the same key's record (moved).
    mutating func relocateSlots(_ body: (ValueSlot) -> ValueSlot) {
        entries.withUnsafeMutableBufferPointer { buckets in
            for position in buckets.indices where !buckets[position].isEmpty {
                buckets[position].slot = body(buckets[position].slot)
            }
        }
    }

    /// Calls `body` with every slot, in no particular order.
    func forEachSlot(_ body: (ValueSlot) throws -> Void) rethrows {
        for entry in entries where !entry.isEmpty { try body(entry.slot) }
    }

    /// Every slot, in no particular order.
    var slots: [ValueSlot] {
        var result: [ValueSlot] = []
        result.reserveCapacity(count)
        forEachSlot { result.append($0) }
        return result
    }

    /// The longest run of occupied buckets (a probe never visits more); for tests.
    var longestRun: Int {
        var longest = 0
        var current = 0
        for entry in entries + entries {  // twice round, for a run that wraps
            if entry.isEmpty {
                current = 0
            } else {
                current += 1
                longest = max(longest, current)
            }
        }
        return min(longest, entries.count)
    }
}
