import Foundation
import MappedKVFormat

// The typed getters with a default of `KeyValueAccess+TypedDefaults.swift`, specialized for
// `MappedKV` inside the module for speed, as in `MappedKV+TypedValues.swift`. Same contract: the
// default is returned only for an absent key; a wrong-type value still throws.
extension MappedKV {
    /// The `Bool` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func bool(forKey key: String, default defaultValue: Bool) throws(MappedKVError) -> Bool {
        try value(forKey: key, as: Bool.self) ?? defaultValue
    }
    /// The `Int32` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func int32(forKey key: String, default defaultValue: Int32) throws(MappedKVError) -> Int32 {
        try value(forKey: key, as: Int32.self) ?? defaultValue
    }
    /// The `UInt32` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func uint32(forKey key: String, default defaultValue: UInt32) throws(MappedKVError) -> UInt32 {
        try value(forKey: key, as: UInt32.self) ?? defaultValue
    }
    /// The `Int64` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func int64(forKey key: String, default defaultValue: Int64) throws(MappedKVError) -> Int64 {
        try value(forKey: key, as: Int64.self) ?? defaultValue
    }
    /// The `UInt64` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func uint64(forKey key: String, default defaultValue: UInt64) throws(MappedKVError) -> UInt64 {
        try value(forKey: key, as: UInt64.self) ?? defaultValue
    }
    /// The `Int` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func int(forKey key: String, default defaultValue: Int) throws(MappedKVError) -> Int {
        try value(forKey: key, as: Int.self) ?? defaultValue
    }
    /// The `Float` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func float(forKey key: String, default defaultValue: Float) throws(MappedKVError) -> Float {
        try value(forKey: key, as: Float.self) ?? defaultValue
    }
    /// The `Double` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func double(forKey key: String, default defaultValue: Double) throws(MappedKVError) -> Double {
        try value(forKey: key, as: Double.self) ?? defaultValue
    }
    /// The `String` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func string(forKey key: String, default defaultValue: String) throws(MappedKVError) -> String {
        try value(forKey: key, as: String.self) ?? defaultValue
    }
    /// The `[UInt8]` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func bytes(forKey key: String, default defaultValue: [UInt8]) throws(MappedKVError) -> [UInt8] {
        try value(forKey: key, as: [UInt8].self) ?? defaultValue
    }
    /// The `Data` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func data(forKey key: String, default defaultValue: Data) throws(MappedKVError) -> Data {
        try value(forKey: key, as: Data.self) ?? defaultValue
    }
    /// The `[String]` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func strings(forKey key: String, default defaultValue: [String]) throws(MappedKVError) -> [String] {
        try value(forKey: key, as: [String].self) ?? defaultValue
    }
    /// The `Date` value of `key`, or `defaultValue` if the key is absent, as MMKV's getters with a `defaultValue`.
    public func date(forKey key: String, default defaultValue: Date) throws(MappedKVError) -> Date {
        try value(forKey: key, as: Date.self) ?? defaultValue
    }
}
