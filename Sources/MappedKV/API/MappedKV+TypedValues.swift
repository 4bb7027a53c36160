import Foundation
import MappedKVFormat

// Concrete typed getters for `MappedKV`, the hot path of most callers. The same getters exist on
// every `KeyValueAccess`, but a generic protocol extension called from another module runs
// unspecialized (a witness-table call per value): see `mappedkv bench` get_int32 and get_string.
// These are specialized here, inside the module.
extension MappedKV {
    /// The `Bool` value of `key`, or nil.
    public func bool(forKey key: String) throws(MappedKVError) -> Bool? { try value(forKey: key, as: Bool.self) }
    /// The `Int32` value of `key`, or nil.
    public func int32(forKey key: String) throws(MappedKVError) -> Int32? { try value(forKey: key, as: Int32.self) }
    /// The `UInt32` value of `key`, or nil.
    public func uint32(forKey key: String) throws(MappedKVError) -> UInt32? { try value(forKey: key, as: UInt32.self) }
    /// The `Int64` value of `key`, or nil.
    public func int64(forKey key: String) throws(MappedKVError) -> Int64? { try value(forKey: key, as: Int64.self) }
    /// The `UInt64` value of `key`, or nil.
    public func uint64(forKey key: String) throws(MappedKVError) -> UInt64? { try value(forKey: key, as: UInt64.self) }
    /// The `Int` value of `key` (stored as an MMKV int64), or nil.
    public func int(forKey key: String) throws(MappedKVError) -> Int? { try value(forKey: key, as: Int.self) }
    /// The `Float` value of `key`, or nil.
    public func float(forKey key: String) throws(MappedKVError) -> Float? { try value(forKey: key, as: Float.self) }
    /// The `Double` value of `key`, or nil.
    public func double(forKey key: String) throws(MappedKVError) -> Double? { try value(forKey: key, as: Double.self) }
    /// The `String` value of `key`, or nil.
    public func string(forKey key: String) throws(MappedKVError) -> String? { try value(forKey: key, as: String.self) }
    /// The bytes value of `key`, or nil.
    public func bytes(forKey key: String) throws(MappedKVError) -> [UInt8]? { try value(forKey: key, as: [UInt8].self) }
    /// Calls `body` with the bytes value of `key` where it lies in the store's memory, without
    /// copying it, and returns what `body` returns; nil if `key` is absent.
    ///
    /// The buffer is valid only during the call, and the call holds this handle's lock: `body`
    /// must not keep the pointer or use this store.
    ///
    /// - Throws: ``MappedKVError/valueDecodingFailed(key:type:reason:)`` if the value is not a
    ///   bytes value.
    @inlinable
    public func withBytes<R>(forKey key: String, _ body: (UnsafeRawBufferPointer) -> R) throws(MappedKVError) -> R? {
        // Inlined into the caller, where R is known; the store is entered through one non-generic
        // function, so no generic metadata is looked up per call.
        var result: R?
        try lendBytes(forKey: key) { result = body($0) }
        return result
    }

    /// Calls `body` with the bytes value of `key` in place if the key is present.
    @usableFromInline
    func lendBytes(forKey key: String, _ body: (UnsafeRawBufferPointer) -> Void) throws(MappedKVError) {
        metrics?.countGet()
        _ = try withCore { (core) throws(MappedKVError) -> Bool in try core.withBytes(forKey: key, body) != nil }
    }
    /// Stores a bytes value under `key` (specialized here, like the getters).
    public func set(_ bytes: [UInt8], forKey key: String) throws(MappedKVError) {
        metrics?.countSet()
        try withCore { (core) throws(MappedKVError) in try core.set(bytes, forKey: key) }
    }
    /// The bytes value of `key` as `Data`, or nil.
    public func data(forKey key: String) throws(MappedKVError) -> Data? { try value(forKey: key, as: Data.self) }
    /// The string-vector value of `key`, or nil.
    public func strings(forKey key: String) throws(MappedKVError) -> [String]? {
        try value(forKey: key, as: [String].self)
    }
    /// The `Date` value of `key` (a Double of seconds since 1970), or nil.
    public func date(forKey key: String) throws(MappedKVError) -> Date? { try value(forKey: key, as: Date.self) }
}
