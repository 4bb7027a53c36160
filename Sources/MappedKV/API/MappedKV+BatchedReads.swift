import MappedKVFormat

// Several keys in one read: one lock, one check for other processes' changes, and the memory
// reads of a group of keys started together (Store/StoreCore+BatchedReads.swift). The values a
// call returns are from one state of the store, as a single get's is.
extension MappedKV {
    /// The values of `keys` decoded as `type`, in the order of `keys`, with nil for each key that
    /// is absent (or expired). Equal to calling ``value(forKey:as:)`` for each key, but in one
    /// call under the store's lock, so every value is from the same state of the store, even
    /// while other processes write; and faster for many keys, because the memory reads of up to
    /// 64 keys are started together instead of one after another.
    ///
    /// ```swift
    /// let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kv-values").path
    /// let store = try MappedKV(id: "limits", directory: dir)
    /// try store.set(Int32(10), forKey: "burst")
    /// try store.set(Int32(50), forKey: "rate")
    /// let limits = try store.values(forKeys: ["burst", "rate", "quota"], as: Int32.self)
    /// assert(limits == [10, 50, nil])
    /// ```
    ///
    /// With metrics on, a call counts as one get.
    ///
    /// - Throws: ``MappedKVError/valueDecodingFailed(key:type:reason:)`` for the first key whose
    ///   stored bytes cannot be a `V` (no values are returned then), or an I/O error.
    @inlinable
    public func values<V: PayloadCodable & Sendable>(
        forKeys keys: [String], as type: V.Type = V.self
    ) throws(MappedKVError) -> [V?] {
        // Inlinable, so that the decoding runs specialized for the caller's `V` rather than
        // through generic arrays and witness calls (`mappedkv bench` batch_get_int32); the reads
        // are one call.
        var values: [V?] = []
        values.reserveCapacity(keys.count)
        var failure: (position: Int, reason: String)?
        try withPayloads(forKeys: keys) { position, payload in
            guard failure == nil else { return }
            guard let payload else { return values.append(nil) }
            do throws(FormatError) {
                values.append(try V(payload: payload))
            } catch {
                failure = (position, error.description)
            }
        }
        if let failure {
            throw .valueDecodingFailed(key: keys[failure.position], type: "\(V.self)", reason: failure.reason)
        }
        return values
    }

    /// Calls `body` with the position of each key of `keys` and its live payload where it lies in
    /// the store's memory (nil for an absent or expired key), in order, under the store's lock:
    /// the reads of ``values(forKeys:as:)``. The buffer is valid only during its call, and `body`
    /// must not call the store.
    @usableFromInline
    func withPayloads(
        forKeys keys: [String], _ body: (_ position: Int, _ payload: UnsafeRawBufferPointer?) -> Void
    ) throws(MappedKVError) {
        metrics?.countGet()
        try withCore { (core) throws(MappedKVError) in try core.withPayloads(forKeys: keys, body) }
    }
}
