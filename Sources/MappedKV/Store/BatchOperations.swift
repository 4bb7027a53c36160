import MappedKVFormat

// The operations of a write batch, recorded in call order and committed together by
// ``StoreCore/applyBatch(_:)``. The invariant: every recorded key is valid and every recorded
// payload is non-empty (the recording functions check both), and each operation's record lies
// encoded in one buffer, back to back in call order, exactly as a store without key expiry
// writes it: `varint(key length) key varint(payload length) payload` for a set and
// `varint(key length) key 00` for a remove. A commit whose records need nothing more (no expiry
// suffix, no removes that may find their key absent) copies that buffer into the region whole;
// the others take each record's key and payload from it. Recording a set allocates nothing once
// the buffers are warm, and a number or a string is encoded in place, in its record. The
// records' buffer is a reference (``BatchRecordBytes``) that a batch copies before it writes
// into one it shares, so batches are values.

/// The sets and removes of one batch, in the order they were made, with their encoded records.
///
/// Sendable as `Array` is: the records' buffer is only written when this batch holds the one
/// reference to it (copy on write), so no other copy, on any thread, can see it change.
struct BatchOperations: @unchecked Sendable {
    /// One recorded operation.
    struct Operation {
        /// Where its record starts in ``BatchOperations/records``.
        var recordStart: Int
        /// The payload's length; 0 marks a remove.
        var payloadLength: Int
        /// The key's length in bytes.
        var keyLength: Int
        /// Seconds until the value expires (0: never; nil: the store's default). Only a set made
        /// with an explicit lifetime has one; it needs key expiry on when the batch commits.
        var expiresAfter: UInt32?
        /// The absolute expiry time to store (0: never), for a value copied with its time
        /// (``StoreCore/setPayloads(_:)``); used only when key expiry is on, and before
        /// ``expiresAfter``.
        var expiresAt: UInt32? = nil

        var isRemove: Bool { payloadLength == 0 }
        /// Where its key starts in ``BatchOperations/records``.
        var keyStart: Int { recordStart + Varint.size(of: UInt64(keyLength)) }
        /// Where its payload starts in ``BatchOperations/records`` (for a remove, where the
        /// deletion's zero length byte is).
        var payloadStart: Int {
            keyStart + keyLength + (isRemove ? 0 : Varint.size(of: UInt64(payloadLength)))
        }
        /// The length of its record without an expiry suffix.
        var recordLength: Int { Record.encodedSize(keyLength: keyLength, valueLength: payloadLength) }
    }

    /// The operations, in call order.
    private(set) var operations: [Operation] = []
    /// Every operation's record, back to back, as written without key expiry.
    private var recordBytes = BatchRecordBytes()
    /// Payloads encoded one after another before each is copied into its record; emptied only
    /// once it passes ``scratchLimit`` (emptying an array costs more than a small set).
    private var scratch: [UInt8] = []

    /// Running totals, kept as operations are recorded so that a commit sizes the batch without
    /// walking it: the sets' records without and with the expiry suffix on their values, the
    /// removes' deletion records, the number of sets, the largest payload, and whether a set
    /// asked for a lifetime of its own.
    private(set) var setsLength = 0
    private(set) var setsLengthWithSuffix = 0
    private(set) var removesLength = 0
    private(set) var setCount = 0
    private(set) var largestPayload = 0
    private(set) var hasOwnLifetime = false

    var isEmpty: Bool { operations.isEmpty }
    var count: Int { operations.count }
    /// Whether any operation is a remove.
    var hasRemoves: Bool { setCount < operations.count }
    /// Every operation's record, back to back, as written without key expiry; valid until the
    /// batch next changes.
    var records: UnsafeBufferPointer<UInt8> { recordBytes.bytes }

    /// The most bytes of record buffer an emptied batch keeps for the next one.
    static let keptRecordCapacity = 1 << 16
    /// The most operations an emptied batch keeps room for.
    static let keptOperationCapacity = 1 << 10
    /// The bytes of encoded payloads the scratch buffer accumulates before it is emptied.
    private static let scratchLimit = 4_096

    /// Forgets every operation, keeping the buffers for the next batch unless they grew past
    /// ``keptRecordCapacity`` or ``keptOperationCapacity`` (a huge batch does not pin its memory).
    mutating func removeAll() {
        let keep = operations.capacity <= Self.keptOperationCapacity
        operations.removeAll(keepingCapacity: keep)
        if isKnownUniquelyReferenced(&recordBytes) {
            recordBytes.removeAll(keepingAtMost: Self.keptRecordCapacity)
        } else {
            recordBytes = BatchRecordBytes()  // another batch has these bytes: leave them to it
        }
        scratch.removeAll(keepingCapacity: scratch.capacity <= Self.keptRecordCapacity)
        setsLength = 0
        setsLengthWithSuffix = 0
        removesLength = 0
        setCount = 0
        largestPayload = 0
        hasOwnLifetime = false
    }

    /// The records' buffer, copied first if another batch shares it.
    @inline(__always)
    private mutating func writableRecords() -> BatchRecordBytes {
        if !isKnownUniquelyReferenced(&recordBytes) { recordBytes = recordBytes.copy() }
        return recordBytes
    }

    /// The key bytes of `operation`, within `records` (the bytes of ``records``).
    static func key(of operation: Operation, in records: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: records[operation.keyStart..<operation.keyStart + operation.keyLength])
    }

    /// The key of `operation` as a string, for messages (keys were recorded from strings).
    func keyString(of operation: Operation) -> String {
        String(decoding: Self.key(of: operation, in: UnsafeRawBufferPointer(records)), as: UTF8.self)
    }

    /// Appends the record of `key` (`keyLength` bytes) with a payload of `payloadLength` bytes
    /// (0: a deletion record) that `writePayload` writes at the pointer it is given, and returns
    /// where the record starts.
    @inline(__always)
    private mutating func appendRecord(
        key: String, keyLength: Int, payloadLength: Int, writePayload: (UnsafeMutableRawPointer) -> Void
    ) -> Int {
        let bytes = writableRecords()
        bytes.reserve(Record.encodedSize(keyLength: keyLength, valueLength: payloadLength))
        let recordStart = bytes.count
        bytes.appendReserved(varint: keyLength)
        StoreCore.withBytes(of: key) { bytes.appendReserved($0) }
        bytes.appendReserved(varint: payloadLength)
        bytes.appendReserved(count: payloadLength, writingWith: writePayload)
        return recordStart
    }

    /// Appends the record of `key` (`keyLength` bytes) with `payload` (empty: a deletion record)
    /// and returns where it starts.
    @inline(__always)
    private mutating func appendRecord(key: String, keyLength: Int, payload: UnsafeRawBufferPointer) -> Int {
        appendRecord(key: key, keyLength: keyLength, payloadLength: payload.count) { destination in
            BatchRecordBytes.copy(payload, to: destination)
        }
    }

    /// Counts a recorded set of a key of `keyLength` bytes and a payload of `payloadLength`.
    @inline(__always)
    private mutating func countSet(keyLength: Int, payloadLength: Int, ownLifetime: Bool) {
        setsLength += Record.encodedSize(keyLength: keyLength, valueLength: payloadLength)
        setsLengthWithSuffix += Record.encodedSize(
            keyLength: keyLength, valueLength: payloadLength + ExpirySuffix.length)
        setCount += 1
        largestPayload = max(largestPayload, payloadLength)
        if ownLifetime { hasOwnLifetime = true }
    }

    /// Records a set of `key` to `value`'s payload, expiring after `expiresAfter` seconds (nil: the
    /// store's default).
    ///
    /// A value whose payload length is known up front (a number, a string) is encoded straight
    /// into its record; others are encoded into the scratch buffer and copied. The public batch
    /// methods are generic and not inlinable, so a caller in another module reaches this function
    /// unspecialized; the specializations below give the common value types a version without
    /// witness-table calls, chosen by one type comparison on entry.
    #if compiler(>=6.2)  // SE-0460; the package's tools version is 6.0
    @specialized(where V == Int32)
    @specialized(where V == Int64)
    @specialized(where V == Int)
    @specialized(where V == UInt32)
    @specialized(where V == UInt64)
    @specialized(where V == Bool)
    @specialized(where V == Double)
    @specialized(where V == Float)
    @specialized(where V == String)
    #endif
    mutating func recordSet<V: PayloadCodable>(
        _ value: V, forKey key: String, expiresAfter: UInt32? = nil
    ) throws(MappedKVError) {
        let keyLength = try StoreCore.validate(key: key)
        let recordStart: Int
        let length: Int
        if let direct = value.directPayloadLength, direct > 0 {
            // A number or a string: encoded in place, in its record.
            length = direct
            recordStart = appendRecord(key: key, keyLength: keyLength, payloadLength: length) { destination in
                value.writePayload(to: destination)
            }
        } else {
            if scratch.count > Self.scratchLimit {
                scratch.removeAll(keepingCapacity: scratch.capacity <= Self.keptRecordCapacity)
            }
            let payloadStart = scratch.count
            value.encodePayload(into: &scratch)
            length = scratch.count - payloadStart
            guard length > 0 else {
                throw .invalidArgument("an empty payload for '\(key)' would be read as a deletion")
            }
            recordStart = scratch.withUnsafeBytes { encoded in
                appendRecord(
                    key: key, keyLength: keyLength, payload: UnsafeRawBufferPointer(rebasing: encoded[payloadStart...]))
            }
        }
        operations.append(
            Operation(
                recordStart: recordStart, payloadLength: length, keyLength: keyLength, expiresAfter: expiresAfter))
        countSet(keyLength: keyLength, payloadLength: length, ownLifetime: expiresAfter != nil)
    }

    /// Records a set of `key` to the encoded `payload`, to be stored with the absolute expiry time
    /// `expiresAt` when key expiry is on (nil: the store's default lifetime).
    mutating func recordSet(payload: [UInt8], forKey key: String, expiresAt: UInt32?) throws(MappedKVError) {
        let keyLength = try StoreCore.validate(key: key)
        guard !payload.isEmpty else {
            throw .invalidArgument("an empty payload for '\(key)' would be read as a deletion")
        }
        let recordStart = payload.withUnsafeBytes { appendRecord(key: key, keyLength: keyLength, payload: $0) }
        operations.append(
            Operation(
                recordStart: recordStart, payloadLength: payload.count, keyLength: keyLength, expiresAfter: nil,
                expiresAt: expiresAt))
        countSet(keyLength: keyLength, payloadLength: payload.count, ownLifetime: false)
    }

    /// Records a removal of `key`.
    mutating func recordRemove(forKey key: String) throws(MappedKVError) {
        let keyLength = try StoreCore.validate(key: key)
        let recordStart = appendRecord(
            key: key, keyLength: keyLength, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        operations.append(
            Operation(recordStart: recordStart, payloadLength: 0, keyLength: keyLength, expiresAfter: nil))
        removesLength += Record.encodedSize(keyLength: keyLength, valueLength: 0)
    }
}
