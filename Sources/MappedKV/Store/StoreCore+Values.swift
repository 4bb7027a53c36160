import MappedKVFormat

extension StoreCore {
    /// Decodes the value of `key` as `V`, or returns nil if the key is absent.
    @inline(__always)
    func value<V: PayloadCodable>(_ type: V.Type, forKey key: String) throws(MappedKVError) -> V? {
        try prepareRead()
        guard let range = liveValueRange(forKey: key) else { return nil }
        do {
            return try mirror.withRawBytes { (bytes) throws(FormatError) -> V in
                try V(payload: UnsafeRawBufferPointer(rebasing: bytes[range]))
            }
        } catch {
            throw .valueDecodingFailed(key: key, type: "\(V.self)", reason: error.description)
        }
    }

    /// The stored payload bytes of `key`, or nil if the key is absent.
    func payload(forKey key: String) throws(MappedKVError) -> [UInt8]? {
        try prepareRead()
        guard let range = liveValueRange(forKey: key) else { return nil }
        return Array(mirror[range])
    }

    /// Every live key with its payload, sorted by key bytes.
    func sortedEntries() throws(MappedKVError) -> [(key: String, payload: [UInt8])] {
        try prepareRead()
        let now = expiryEnabled ? configuration.clock.now() : 0
        var entries: [(key: [UInt8], payload: [UInt8])] = []
        entries.reserveCapacity(index.count)
        index.forEachSlot { slot in
            if let range = liveValueRange(slot, now: now) {
                entries.append((Array(mirror[slot.keyRange]), Array(mirror[range])))
            }
        }
        return
            entries
            .sorted { $0.key.lexicographicallyPrecedes($1.key) }
            .map { (key: String(decoding: $0.key, as: UTF8.self), payload: $0.payload) }
    }

    /// A snapshot of the file-level state.
    func info() throws(MappedKVError) -> StoreInfo {
        try prepareRead()
        var holderBytes: [UInt8] = []
        if !mirror.isEmpty {
            mirror.withUnsafeBytes { bytes in
                var cursor = ByteCursor(bytes)
                if (try? cursor.readVarint64()) != nil { holderBytes = Array(bytes[0..<cursor.position]) }
            }
        }
        return StoreInfo(
            id: location.id, dataPath: location.dataPath, metaPath: location.metaPath, meta: meta,
            fileSize: dataFileSize, actualSize: actualSize, keyCount: try count(), recordCount: recordCount,
            holder: holderBytes, header: header)
    }
}
