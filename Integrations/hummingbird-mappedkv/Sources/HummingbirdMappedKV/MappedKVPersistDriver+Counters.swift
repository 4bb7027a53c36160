// Counters shared by every process on the store: `increment` reads, adds and writes in one
// exclusive section of the store, so increments from any number of processes are never lost.
//
// Invariants: a counter is an ordinary entry whose JSON is an integer (`get(key:as: Int.self)`
// reads it); its expiry is set when the counter is created and kept by every increment (a fixed
// window), and an expired counter starts again from the delta; a key holding anything but a live
// counter, or a sum past `Int`'s range, throws and changes nothing.

import Foundation
import Hummingbird
import MappedKV

extension MappedKVPersistDriver {
    /// Adds `delta` to the counter under `key`, creating it with the value `delta` if there is
    /// none (or it has expired), and returns the new value. Atomic across every process on the
    /// store: concurrent increments are all counted.
    ///
    /// The counter is stored as JSON of an integer, so `get(key:as: Int.self)` reads it and
    /// `set(key:value:expires:)` with an `Int` resets it.
    ///
    /// ```swift
    /// let views = try await persist.increment(key: "views:\(page)")
    /// let attempts = try await persist.increment(key: "login:\(user)", expires: .seconds(900))
    /// ```
    ///
    /// - Parameters:
    ///   - key: the counter's key.
    ///   - delta: what to add; may be negative.
    ///   - expires: how long a counter this call creates lives; nil for ever. Ignored when the
    ///     counter exists: its expiry stays where its creation put it, so a counter counts within
    ///     a fixed window.
    /// - Returns: the counter's value after the increment.
    /// - Throws: ``MappedKVPersistError/notACounter(key:)`` if `key` holds a live value that is not
    ///   JSON of an integer (or one this driver did not write);
    ///   ``MappedKVPersistError/counterOutOfRange(key:value:delta:)`` if the sum is past `Int`'s
    ///   range; ``MappedKVError`` for a key the store refuses or a driver shut down.
    @discardableResult
    public func increment(key: String, by delta: Int = 1, expires: Duration? = nil) async throws -> Int {
        try await incrementReportingExpiry(key: key, by: delta, expires: expires).value
    }

    /// ``increment(key:by:expires:)``, also returning the time the counter has left (nil if it
    /// never expires), measured at the increment.
    func incrementReportingExpiry(
        key: String, by delta: Int, expires: Duration?
    ) async throws -> (value: Int, timeLeft: Duration?) {
        let storedKey = try self.storedKey(key)
        let (value, expiresAt, now) = try await store.withExclusiveLock {
            transaction throws -> (Int, Int64?, Int64) in
            let now = self.now()
            let value: Int
            let expiresAt: Int64?
            switch try Self.existing(storedKey, in: transaction, at: now) {
            case .absent, .expired(_):
                value = delta
                expiresAt = expires.map { PersistTime.expiry(after: $0, from: now) }
            case .alive(let kept, let json):
                guard let current = Self.counterValue(json) else { throw MappedKVPersistError.notACounter(key: key) }
                let (sum, overflow) = current.addingReportingOverflow(delta)
                guard !overflow else {
                    throw MappedKVPersistError.counterOutOfRange(key: key, value: current, delta: delta)
                }
                value = sum
                expiresAt = kept
            case .foreign:
                throw MappedKVPersistError.notACounter(key: key)
            }
            try transaction.set(
                PersistEnvelope.encode(json: Data(String(value).utf8), expiresAt: expiresAt), forKey: storedKey)
            return (value, expiresAt, now)
        }
        logger.trace("persist increment", metadata: ["key": "\(storedKey)", "value": "\(value)"])
        return (value, expiresAt.map { PersistTime.timeLeft(until: $0, at: now) })
    }

    /// The integer `json` is, written as JSONEncoder writes an `Int` (an optional minus sign and
    /// decimal digits, nothing around them); nil for anything else, or a number past `Int`'s range.
    static func counterValue(_ json: ArraySlice<UInt8>) -> Int? {
        guard json.count <= 20, let text = String(bytes: json, encoding: .ascii) else { return nil }
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }
}
