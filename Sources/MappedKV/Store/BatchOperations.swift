import MappedKVFormat

// The operations of a write batch, recorded in call order and committed together by
// ``StoreCore/applyBatch(_:)``. The invariant: every recorded key is valid and every recorded
// payload is non-empty (the recording functions check both), and the payloads lie back to back in
// one buffer, so recording a set allocates nothing once the buffers are warm.

/// The sets and removes of one batch, in the order they were made, with their encoded payloads.
struct BatchOperations {
    /// One recorded operation.
    struct Operation {
        /// The key it applies to.
        var key: String
        /// Where the payload starts in ``BatchOperations/payloads``; unused for a remove.
        var payloadStart: Int
        /// The payload's length; 0 marks a remove.
        var payloadLength: Int
        /// Seconds until the value expires (0: never; nil: the store's default). Only a set made
        /// with an explicit lifetime has one; it needs key expiry on when the batch commits.
        var expiresAfter: UInt32?
        /// The absolute expiry time to store (0: never), for a value copied with its time
        /// (``StoreCore/setPayloads(_:)``); used only when key expiry is on, and before
        /// ``expiresAfter``.
        var expiresAt: UInt32? = nil

        var isRemove: Bool { payloadLength == 0 }
    }

    /// The operations, in call order.
    private(set) var operations: [Operation] = []
    /// Every set's payload, back to back.
    private(set) var payloads: [UInt8] = []

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

    /// The most bytes of payload buffer an emptied batch keeps for the next one.
    static let keptPayloadCapacity = 1 << 16
    /// The most operations an emptied batch keeps room for.
    static let keptOperationCapacity = 1 << 10

    /// Forgets every operation, keeping the buffers for the next batch unless they grew past
    /// ``keptPayloadCapacity`` or ``keptOperationCapacity`` (a huge batch does not pin its memory).
    mutating func removeAll() {
        let keep =
            payloads.capacity <= Self.keptPayloadCapacity && operations.capacity <= Self.keptOperationCapacity
        operations.removeAll(keepingCapacity: keep)
        payloads.removeAll(keepingCapacity: keep)
        setsLength = 0
        setsLengthWithSuffix = 0
        removesLength = 0
        setCount = 0
        largestPayload = 0
        hasOwnLifetime = false
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
    mutating func recordSet<V: PayloadCodable>(
        _ value: V, forKey key: String, expiresAfter: UInt32? = nil
    ) throws(MappedKVError) {
        let keyLength = try StoreCore.validate(key: key)
        let start = payloads.count
        value.encodePayload(into: &payloads)
        let length = payloads.count - start
        guard length > 0 else {
            payloads.removeLast(length)
            throw .invalidArgument("an empty payload for '\(key)' would be read as a deletion")
        }
        operations.append(
            Operation(key: key, payloadStart: start, payloadLength: length, expiresAfter: expiresAfter))
        countSet(keyLength: keyLength, payloadLength: length, ownLifetime: expiresAfter != nil)
    }

    /// Records a set of `key` to the encoded `payload`, to be stored with the absolute expiry time
    /// `expiresAt` when key expiry is on (nil: the store's default lifetime).
    mutating func recordSet(payload: [UInt8], forKey key: String, expiresAt: UInt32?) throws(MappedKVError) {
        let keyLength = try StoreCore.validate(key: key)
        guard !payload.isEmpty else {
            throw .invalidArgument("an empty payload for '\(key)' would be read as a deletion")
        }
        operations.append(
            Operation(
                key: key, payloadStart: payloads.count, payloadLength: payload.count, expiresAfter: nil,
                expiresAt: expiresAt))
        payloads.append(contentsOf: payload)
        countSet(keyLength: keyLength, payloadLength: payload.count, ownLifetime: false)
    }

    /// Records a removal of `key`.
    mutating func recordRemove(forKey key: String) throws(MappedKVError) {
        let keyLength = try StoreCore.validate(key: key)
        operations.append(Operation(key: key, payloadStart: payloads.count, payloadLength: 0, expiresAfter: nil))
        removesLength += Record.encodedSize(keyLength: keyLength, valueLength: 0)
    }
}
