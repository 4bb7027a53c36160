// Small integer IDs for the keys of a bucket's indexed entries, so that every index stores a 4-byte
// ID per entry instead of the key. The invariant: an ID names one key from `assign` until `release`,
// and `key(of:)` of an assigned ID is that key.

/// The keys of a bucket's indexed entries and their IDs.
final class KeyTable {
    private(set) var keys: [String] = []
    private var idByKey: [String: UInt32] = [:]
    private var free: [UInt32] = []

    /// The number of keys with an ID.
    var count: Int { idByKey.count }

    /// Every key with an ID, in no particular order.
    var assignedKeys: Dictionary<String, UInt32>.Keys { idByKey.keys }

    /// The ID of `key`, if it has one.
    func id(of key: String) -> UInt32? { idByKey[key] }

    /// The key of an assigned ID.
    func key(of id: UInt32) -> String { keys[Int(id)] }

    /// The ID of `key`, assigned if it has none.
    func assign(_ key: String) -> UInt32 {
        if let id = idByKey[key] { return id }
        let id: UInt32
        if let reused = free.popLast() {
            id = reused
            keys[Int(id)] = key
        } else {
            id = UInt32(keys.count)
            keys.append(key)
        }
        idByKey[key] = id
        return id
    }

    /// Fills an empty table with `keys`, each key's ID its position (the keys are distinct: they
    /// are a store's keys).
    func load(_ keys: [String]) {
        precondition(idByKey.isEmpty, "load fills an empty table")
        // A copy with no spare capacity: the scan grew the array by doubling.
        self.keys = keys.withUnsafeBufferPointer { Array($0) }
        idByKey.reserveCapacity(keys.count)
        for (id, key) in keys.enumerated() { idByKey[key] = UInt32(id) }
    }

    /// Forgets `key`; its ID may be given to another key.
    func release(_ key: String) {
        guard let id = idByKey.removeValue(forKey: key) else { return }
        keys[Int(id)] = ""
        free.append(id)
    }
}
